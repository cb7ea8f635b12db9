"""``http2_compact``: h2's settings and hpack's decoder table kept in lists answer exactly as
h2's and hpack's own deques do, whatever is done to them."""

from __future__ import annotations

import collections
from typing import Any

import h2.config
import h2.connection
import h2.settings
import hpack
import pytest
from hpack.table import HeaderTable
from hypothesis import given
from hypothesis import strategies as st

from trioframe._protocol.http2_compact import CompactSettings, compact_table
from trioframe._protocol.http2_machine import ServerMachine, ServerSettings

CODES = [*h2.settings.SettingCodes, 0x0A, 0xF0]  # the known settings and two unknown
VALUES = st.sampled_from([0, 1, 2, 100, 4096, 16383, 16384, 65535, 2**24, 2**31, 2**32])

SETTINGS_STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("set"), st.sampled_from(CODES), VALUES),
        st.tuples(st.just("get"), st.sampled_from(CODES)),
        st.tuples(st.just("delete"), st.sampled_from(CODES)),
        st.tuples(st.just("acknowledge")),
        st.tuples(st.just("view")),
    ),
    max_size=40,
)


def outcome(step: Any) -> Any:
    try:
        return ("ok", step())
    except Exception as exc:  # the same refusal, of the same type
        return ("raised", type(exc), getattr(exc, "error_code", None))


def settings_step(settings: h2.settings.Settings, step: tuple[Any, ...]) -> Any:
    match step:
        case ("set", code, value):
            return outcome(lambda: settings.__setitem__(code, value))
        case ("get", code):
            return outcome(lambda: settings[code])
        case ("delete", code):
            return outcome(lambda: settings.__delitem__(code))
        case ("acknowledge",):
            return outcome(
                lambda: sorted(
                    (code, (change.setting, change.original_value, change.new_value))
                    for code, change in settings.acknowledge().items()
                )
            )
        case _:
            return outcome(
                lambda: (
                    sorted(settings),
                    len(settings),
                    settings.header_table_size,
                    settings.initial_window_size,
                    settings.max_frame_size,
                    settings.max_concurrent_streams,
                    settings.max_header_list_size,
                    settings.enable_connect_protocol,
                )
            )


@given(
    client=st.booleans(),
    initial=st.dictionaries(st.sampled_from(list(h2.settings.SettingCodes)), VALUES, max_size=3),
    steps=SETTINGS_STEPS,
)
def test_compact_settings_answer_as_h2s_settings(
    client: bool, initial: dict[Any, int], steps: list[tuple[Any, ...]]
) -> None:
    made = outcome(lambda: h2.settings.Settings(client, initial))
    compact_made = outcome(lambda: CompactSettings(client, initial))
    assert made[0] == compact_made[0]
    if made[0] == "raised":
        assert made == compact_made
        return
    reference, compact = made[1], compact_made[1]
    for step in steps:
        assert settings_step(compact, step) == settings_step(reference, step), step
    assert all(type(values) is not collections.deque for values in compact._settings.values())


FIELDS = st.tuples(
    st.sampled_from([b"a", b"x-long-name" * 3, b":path", b"cookie"]),
    st.binary(max_size=60),
)
TABLE_STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("add"), FIELDS),
        st.tuples(st.just("resize"), st.sampled_from([0, 64, 200, 4096])),
        st.tuples(st.just("search"), FIELDS),
        st.tuples(st.just("index"), st.integers(min_value=1, max_value=90)),
    ),
    max_size=60,
)


def table_step(table: HeaderTable, step: tuple[Any, ...]) -> Any:
    match step:
        case ("add", (name, value)):
            return outcome(lambda: table.add(name, value))
        case ("resize", size):
            return outcome(lambda: setattr(table, "maxsize", size))
        case ("search", (name, value)):
            return outcome(lambda: table.search(name, value))
        case ("index", index):
            return outcome(lambda: table.get_by_index(index))
    raise AssertionError(step)


@given(steps=TABLE_STEPS)
def test_a_compact_table_answers_as_hpacks(steps: list[tuple[Any, ...]]) -> None:
    reference, compact = HeaderTable(), HeaderTable()
    compact_table(compact)
    for step in steps:
        assert table_step(compact, step) == table_step(reference, step), step
        assert list(compact.dynamic_entries) == list(reference.dynamic_entries)


@given(blocks=st.lists(st.lists(FIELDS, max_size=6), max_size=8))
def test_a_compact_decoder_decodes_as_hpacks(blocks: list[list[tuple[bytes, bytes]]]) -> None:
    encoder, reference, compact = hpack.Encoder(), hpack.Decoder(), hpack.Decoder()
    compact_table(compact.header_table)
    for fields in blocks:
        data = encoder.encode(fields)
        assert compact.decode(data, raw=True) == reference.decode(data, raw=True)


def test_the_server_machine_keeps_no_deque_for_its_settings_or_decoder_table() -> None:
    machine = ServerMachine(h2.config.H2Configuration(client_side=False), 65536)
    local = ServerSettings(
        client=False, initial_values={h2.settings.SettingCodes.MAX_FRAME_SIZE: 2**14}
    )
    local[h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS] = 10
    for settings in (machine.remote_settings, local):
        assert all(type(values) is not collections.deque for values in settings._settings.values())
    assert type(machine.decoder.header_table.dynamic_entries) is not collections.deque


def test_the_frame_dispatch_binds_what_h2s_table_holds() -> None:
    config = h2.config.H2Configuration(client_side=False)
    reference = h2.connection.H2Connection(config)._frame_dispatch_table
    machine = ServerMachine(config, 65536)
    table = machine._frame_dispatch_table
    assert not isinstance(table, dict)  # nothing bound until a frame arrives
    for kind, method in reference.items():
        assert table[kind].__func__ is getattr(type(machine), method.__name__)
        assert table[kind].__self__ is machine
    with pytest.raises(KeyError):
        table[int]
