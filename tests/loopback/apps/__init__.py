"""Small applications the loopback tests run in subprocesses."""
