"""Every code block of docs/testing.md works as pasted, without configuring pytest: the
documented project (app.py, conftest.py, tests/test_app.py), its variants, and each other
Python block as a test module of its own (with the plugin's trio mode, no ``trio_mode``)."""

from __future__ import annotations

import pathlib

from ._docs import (
    blocks,
    noxfile_sessions,
    outcome,
    project_files,
    run_pytest,
    variant,
    write,
)


def test_the_page_tags_the_documented_project() -> None:
    files = project_files()
    assert set(files) == {"app.py", "conftest.py", "tests/test_app.py", "noxfile.py"}
    (first_test,) = [b for b in blocks() if b.path == "tests/test_app.py"]
    body = first_test.code.split("async def ", 1)[1].splitlines()
    assert len([line for line in body if line.strip()]) == 3  # "the first test is three lines"


def test_the_block_reader_dedents_blocks_in_lists() -> None:
    text = (
        "- item\n\n  ```python\n  # a.py, note\n  x = 1\n  ```\n\n```toml\n# p.toml\nk = 1\n```\n"
    )
    first, second = blocks(text)
    assert (first.path, first.note, first.code) == ("a.py", "note", "# a.py, note\nx = 1\n")
    assert (second.lang, second.path, second.note) == ("toml", "p.toml", None)


def test_the_documented_project_passes(tmp_path: pathlib.Path) -> None:
    files = project_files()
    del files["noxfile.py"]  # nox is not run here; see the next test and test_fresh_project
    write(tmp_path, files)
    result = run_pytest(tmp_path)
    assert result.returncode == 0, outcome(result)
    assert "1 passed" in result.stdout


def test_the_documented_noxfile_runs_pytest_and_strict_mypy() -> None:
    sessions = noxfile_sessions(project_files()["noxfile.py"])
    assert sessions["tests"].installs == [("trioframe[testing]",)]
    assert sessions["tests"].runs == [("python", "-m", "pytest")]
    assert sessions["typing"].installs == [("trioframe[testing]", "mypy")]
    assert sessions["typing"].runs == [("mypy", "--strict", "app.py", "conftest.py", "tests")]


def test_a_client_fixture_of_your_own_replaces_the_plugins(tmp_path: pathlib.Path) -> None:
    files = project_files()
    del files["noxfile.py"]
    files["conftest.py"] = variant("conftest.py", "with a client of your own")
    files["tests/test_limit.py"] = (
        "async def test_limit(client):\n"
        "    response = await client.request('GET', '/', content=b'x' * 2000)\n"
        "    assert response.status_code == 413\n"
    )
    write(tmp_path, files)
    result = run_pytest(tmp_path)
    assert result.returncode == 0, outcome(result)
    assert "2 passed" in result.stdout


def test_the_documented_option_turns_trio_mode_off(tmp_path: pathlib.Path) -> None:
    files = project_files()
    del files["noxfile.py"]
    files["pyproject.toml"] = variant("pyproject.toml", "with the plugin's trio mode off")
    write(tmp_path, files)
    result = run_pytest(tmp_path)
    assert result.returncode != 0, outcome(result)
    assert "'test_hello' requested an async fixture 'client'" in result.stdout, outcome(result)


def test_every_other_python_block_passes_as_a_test_module(tmp_path: pathlib.Path) -> None:
    modules = [b for b in blocks() if b.lang == "python" and b.path is None]
    assert len(modules) >= 7
    for block in modules:
        (tmp_path / f"test_block_line_{block.line}.py").write_text(block.code)
    result = run_pytest(tmp_path, "-W", "error::pytest.PytestUnraisableExceptionWarning")
    assert result.returncode == 0, outcome(result)
    tests = sum(block.code.count("\nasync def test_") for block in modules)
    assert f"{tests} passed" in result.stdout, outcome(result)
