"""``parse_header_parameters``: the strict reader of header values with parameters that the
multipart decoder uses for the request's Content-Type and each part's Content-Disposition and
Content-Type. Valid values, refused ones with the reason, the parameter cap at N-1, N, N+1,
and linear time on 16 KiB of adversarial input."""

from __future__ import annotations

import contextlib
import time

import pytest

from trioframe._http.params import MAX_PARAMETERS, ParameterError, parse_header_parameters

VALID: list[tuple[str, tuple[str, dict[str, str]]]] = [
    ("form-data", ("form-data", {})),
    ('form-data; name="a"', ("form-data", {"name": "a"})),
    ('Form-Data; NAME="A"; FileName=b.txt', ("form-data", {"name": "A", "filename": "b.txt"})),
    ("Multipart/Form-Data; Boundary=XyZ", ("multipart/form-data", {"boundary": "XyZ"})),
    ('  form-data\t;\tname="a"  ;  x=y  ', ("form-data", {"name": "a", "x": "y"})),
    # RFC 9110 allows empty parameters: stray and trailing semicolons.
    ('form-data;; name="a";;', ("form-data", {"name": "a"})),
    ("text/plain;", ("text/plain", {})),
    ('form-data; name=""', ("form-data", {"name": ""})),
    # Raw UTF-8 (already decoded) inside a quoted-string, as browsers send names.
    ('form-data; name="名前"; filename="写真.jpg"', ("form-data", {"name": "名前", "filename": "写真.jpg"})),
    ('form-data; filename="Отчёт.pdf"', ("form-data", {"filename": "Отчёт.pdf"})),
    ('form-data; filename="🙂.png"', ("form-data", {"filename": "🙂.png"})),
    # \" and \\ are escapes; any other backslash is kept (browsers never escape one).
    (r'form-data; name="say \"hi\""', ("form-data", {"name": 'say "hi"'})),
    (r'form-data; name="a\\b"', ("form-data", {"name": "a\\b"})),
    (r'form-data; filename="C:\dir\a.txt"', ("form-data", {"filename": "C:\\dir\\a.txt"})),
    (r'form-data; name="\\\""', ("form-data", {"name": '\\"'})),
    ('form-data; name="semi;colon = quoted"', ("form-data", {"name": "semi;colon = quoted"})),
    ('form-data; name="tab\there"', ("form-data", {"name": "tab\there"})),
    # Percent sequences in a quoted value are the client's text, left as they are.
    ('form-data; filename="a%22b%0A.txt"', ("form-data", {"filename": "a%22b%0A.txt"})),
    # RFC 8187 extended values, preferred over the plain ones whatever the order.
    ("form-data; filename*=UTF-8''%E5%86%99%E7%9C%9F.jpg", ("form-data", {"filename": "写真.jpg"})),
    ("form-data; filename*=utf-8'ja'%E5%86%99.jpg", ("form-data", {"filename": "写.jpg"})),
    ("form-data; filename*=ISO-8859-1''caf%E9.txt", ("form-data", {"filename": "café.txt"})),
    ("form-data; name*=UTF-8''%F0%9F%99%82", ("form-data", {"name": "🙂"})),
    ('form-data; filename="x.jpg"; filename*=UTF-8\'\'%C3%A9.jpg', ("form-data", {"filename": "é.jpg"})),
    ('form-data; filename*=UTF-8\'\'%C3%A9.jpg; filename="x.jpg"', ("form-data", {"filename": "é.jpg"})),
    ("form-data; filename*=UTF-8''", ("form-data", {"filename": ""})),
    ("x; a*=UTF-8''a%20b%25c", ("x", {"a": "a b%c"})),
]  # fmt: skip


@pytest.mark.parametrize(("header", "expected"), VALID)
def test_valid_values(header: str, expected: tuple[str, dict[str, str]]) -> None:
    assert parse_header_parameters(header) == expected


REFUSED: list[tuple[str, str]] = [
    # Ambiguous: a parameter twice, RFC 2231 continuations, mixed forms.
    ('form-data; name="a"; name="b"', "'name' appears more than once"),
    ('form-data; name="a"; NAME=b', "'name' appears more than once"),
    ("form-data; name*=UTF-8''a; name*=UTF-8''b", "'name*' appears more than once"),
    ("form-data; name*0=a; name*1=b", "continuations are not supported"),
    ("form-data; name*0*=UTF-8''a", "continuations are not supported"),
    ("multipart/form-data; boundary*=UTF-8''x; boundary*0=y", "continuations are not supported"),
    ("multipart/form-data; boundary*=x; boundary*0=y", "charset'language'percent-encoded"),
    ('form-data; name*=x; name*0=y', "charset'language'percent-encoded"),
    # Extended values: only UTF-8 and ISO-8859-1, well-formed, decodable, unquoted.
    ("form-data; filename*=windows-1252''a", "'windows-1252' is not UTF-8 or ISO-8859-1"),
    ("form-data; filename*=''a", "charset'language'percent-encoded"),
    ("form-data; filename*=UTF-8'a", "charset'language'percent-encoded"),
    ("form-data; filename*=UTF-8''%4", "charset'language'percent-encoded"),
    ("form-data; filename*=UTF-8''%zz", "charset'language'percent-encoded"),
    ("form-data; filename*=UTF-8''a'b", "charset'language'percent-encoded"),
    ("form-data; filename*=UTF-8''%FF%FE", "is not valid UTF-8"),
    ("form-data; filename*=UTF-8''a%00b", "control character"),
    ("form-data; filename*=UTF-8''a%0D%0Ab", "control character"),
    ('form-data; filename*="UTF-8\'\'a"', "an extended value is not quoted"),
    # Broken syntax.
    ('form-data; name="unterminated', "'name' has no valid value"),
    (r'form-data; name="ends with an escaped quote\"', "'name' has no valid value"),
    ('form-data; name="nul\x00"', "'name' has no valid value"),
    ('form-data; name="lf\nx"', "'name' has no valid value"),
    ("form-data; name=", "'name' has no valid value"),
    ("form-data; name=写真", "'name' has no valid value"),
    ("form-data; name", "'name' has no '='"),
    ('form-data; name = "a"', "'name' has no '='"),
    ('form-data; name= "a"', "'name' has no valid value"),
    ('form-data; name="a" filename="b"', "expected ';' after parameter 'name'"),
    ('form-data; name="a"x', "expected ';' after parameter 'name'"),
    ("form-data; name=a b", "expected ';' after parameter 'name'"),
    ('form-data; ="a"', "expected a parameter name"),
    ("", "'' is not a token or type/subtype"),
    ('; name="a"', "'' is not a token or type/subtype"),
    ('form data; name="a"', "is not a token or type/subtype"),
    ("a/b/c", "is not a token or type/subtype"),
    ('"form-data"', "is not a token or type/subtype"),
]  # fmt: skip


@pytest.mark.parametrize(("header", "reason"), REFUSED)
def test_refused_values(header: str, reason: str) -> None:
    with pytest.raises(ParameterError) as caught:
        parse_header_parameters(header)
    assert reason in str(caught.value), str(caught.value)


def test_long_client_text_is_cut_in_messages() -> None:
    with pytest.raises(ParameterError) as caught:
        parse_header_parameters("form-data; " + "n" * 5000)
    assert len(str(caught.value)) < 100


def _params(count: int) -> str:
    return "form-data" + "".join(f"; p{i}=v" for i in range(count))


@pytest.mark.parametrize("count", [MAX_PARAMETERS - 1, MAX_PARAMETERS])
def test_up_to_max_parameters_are_read(count: int) -> None:
    assert parse_header_parameters(_params(count))[1] == {f"p{i}": "v" for i in range(count)}


def test_one_parameter_over_max_parameters_is_refused() -> None:
    with pytest.raises(ParameterError, match=f"more than {MAX_PARAMETERS} parameters"):
        parse_header_parameters(_params(MAX_PARAMETERS + 1))


def test_empty_parameters_do_not_count() -> None:
    header = _params(MAX_PARAMETERS) + ";" * 1000
    assert len(parse_header_parameters(header)[1]) == MAX_PARAMETERS


N = 16 * 1024  # the default max_part_header_size
ADVERSARIAL = {
    "escaped quotes, unterminated": 'form-data; name="' + '\\"' * (N // 2),
    "backslashes, unterminated": 'form-data; name="' + "\\" * N,
    "backslashes, terminated": 'form-data; name="' + "\\" * N + '"',
    "escapes and lone backslashes": 'form-data; name="' + 'a\\b\\"\\\\' * (N // 7) + '"',
    "semicolons": "form-data" + ";" * N,
    "spaces": "form-data;" + " " * N + "x",
    "many parameters": "form-data; " + "; ".join(f"a{i}=b" for i in range(N // 8)),
    "many quoted parameters": "form-data; " + "; ".join(f'a{i}="b\\"c"' for i in range(N // 12)),
    "long extended value": "form-data; name*=UTF-8''" + "%41" * (N // 3),
    "long extended value, bad end": "form-data; name*=UTF-8''" + "%41" * (N // 3) + "%4",
    "long quoted UTF-8": 'form-data; name="' + "é" * N + '"',
    "long name": "form-data; " + "a" * N,
    "long main value": "a" * N + "/" + "b" * N,
    "quote soup": "form-data; name=" + '"\\"' * (N // 3),
}


@pytest.mark.parametrize("header", list(ADVERSARIAL.values()), ids=list(ADVERSARIAL))
def test_16_kib_of_adversarial_input_parses_in_linear_time(header: str) -> None:
    """Each of these takes about 0.1-3 ms; quadratic behaviour on 16 KiB would take far longer
    than the 10 ms allowed. CPU time of this thread, best of five runs: a loaded machine or a
    garbage collection does not count."""
    best = float("inf")
    for _ in range(5):
        start = time.thread_time()
        with contextlib.suppress(ParameterError):
            parse_header_parameters(header)
        best = min(best, time.thread_time() - start)
    assert best < 0.010, f"{best * 1000:.1f} ms"
