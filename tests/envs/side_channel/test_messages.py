"""Side-channel messages and framing: IncomingMessage, OutgoingMessage, SideChannelManager.

Expected bytes are written out with ``struct.pack`` from ML-Agents' wire format (little-endian;
frames are a 16-byte ``uuid.bytes_le`` channel id, an int32 length and the payload), never
produced by the code under test.
"""

from __future__ import annotations

import enum
import struct
import uuid
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from zooport.envs.side_channel import (
    FloatPropertiesChannel,
    IncomingMessage,
    OutgoingMessage,
    RawBytesChannel,
    SideChannel,
    SideChannelManager,
    SideChannelTypeError,
    StatsSideChannel,
)
from zooport.errors import SideChannelError, ZooportError

from tests.support.wire import frame

RAW_ID = uuid.UUID("11111111-2222-3333-4444-555555555555")
OTHER_ID = uuid.UUID("99999999-8888-7777-6666-555555555555")


class RecordingChannel(SideChannel):
    """Keeps every message it receives, read as raw bytes."""

    def __init__(self, channel_id: uuid.UUID) -> None:
        super().__init__(channel_id)
        self.received: list[bytes] = []

    def on_message_received(self, msg: IncomingMessage) -> None:
        self.received.append(bytes(msg.get_raw_bytes()))


# ------------------------------------------------------------------ OutgoingMessage


def test_outgoing_layout_matches_struct_pack():
    msg = OutgoingMessage()
    msg.write_bool(True)
    msg.write_int32(-7)
    msg.write_float32(0.25)
    msg.write_float32_list([1.0, -2.5])
    msg.write_string("key")
    expected = (
        struct.pack("<?", True)
        + struct.pack("<i", -7)
        + struct.pack("<f", 0.25)
        + struct.pack("<i2f", 2, 1.0, -2.5)
        + struct.pack("<i3s", 3, b"key")
    )
    assert msg.buffer == expected
    assert isinstance(msg.buffer, bytes)


def test_outgoing_accepts_numpy_scalars_arrays_and_int_enums():
    class Code(enum.IntEnum):
        THREE = 3

    msg = OutgoingMessage()
    msg.write_bool(np.bool_(False))
    msg.write_int32(np.int64(5))
    msg.write_int32(Code.THREE)
    msg.write_float32(np.float32(1.5))
    msg.write_float32_list(np.array([0.5, 0.75], dtype=np.float64))
    expected = struct.pack("<?iif", False, 5, 3, 1.5) + struct.pack("<i2f", 2, 0.5, 0.75)
    assert msg.buffer == expected


def test_outgoing_float32_allows_nan_and_infinities():
    msg = OutgoingMessage()
    msg.write_float32(float("inf"))
    msg.write_float32(float("-inf"))
    msg.write_float32(float("nan"))
    values = struct.unpack("<3f", msg.buffer)
    assert values[0] == float("inf") and values[1] == float("-inf") and np.isnan(values[2])


@pytest.mark.parametrize(
    ("method", "value", "error", "match"),
    [
        ("write_bool", 1, SideChannelTypeError, "expected a bool, got int 1"),
        ("write_int32", True, SideChannelTypeError, "expected an int, got bool"),
        ("write_int32", 1.0, SideChannelTypeError, "expected an int, got float 1.0"),
        ("write_int32", "3", SideChannelTypeError, "expected an int, got str"),
        ("write_int32", 2**31, SideChannelError, r"int32 in \[-2147483648, 2147483647\]"),
        ("write_int32", -(2**31) - 1, SideChannelError, "got -2147483649"),
        ("write_float32", "1.0", SideChannelTypeError, "expected a real number, got str"),
        ("write_float32", None, SideChannelTypeError, "expected a real number, got NoneType"),
        ("write_float32", False, SideChannelTypeError, "expected a real number, got bool"),
        ("write_float32", 1e39, SideChannelError, "representable as float32.*got 1e\\+39"),
        ("write_float32_list", "abc", SideChannelTypeError, "iterable of real numbers"),
        ("write_float32_list", [1.0, "x"], SideChannelTypeError, "item 1: expected a real"),
        ("write_string", b"key", SideChannelTypeError, "expected a str, got bytes"),
        ("write_string", "caf\u00e9", SideChannelError, "non-ASCII character '\u00e9' at index 3"),
        ("set_raw_bytes", "abc", SideChannelTypeError, "expected bytes"),
    ],
)
def test_outgoing_rejects_bad_values_and_leaves_message_unchanged(method, value, error, match):
    msg = OutgoingMessage()
    msg.write_int32(1)
    with pytest.raises(error, match=match):
        getattr(msg, method)(value)
    assert msg.buffer == struct.pack("<i", 1)


def test_outgoing_errors_derive_from_the_builtin_a_user_would_catch():
    msg = OutgoingMessage()
    with pytest.raises(TypeError):
        msg.write_int32("1")
    with pytest.raises(ValueError):
        msg.write_int32("1")  # SideChannelTypeError is a SideChannelError, so a ValueError
    with pytest.raises(ZooportError):
        msg.write_int32(2**40)


def test_set_raw_bytes_replaces_and_warns_when_overwriting():
    msg = OutgoingMessage()
    msg.set_raw_bytes(bytearray(b"\x01\x02"))
    assert msg.buffer == b"\x01\x02"
    with pytest.warns(UserWarning, match="discards the 2 bytes"):
        msg.set_raw_bytes(memoryview(b"\x03"))
    assert msg.buffer == b"\x03"


def test_buffer_is_a_snapshot():
    msg = OutgoingMessage()
    msg.write_int32(1)
    snapshot = msg.buffer
    msg.write_int32(2)
    assert snapshot == struct.pack("<i", 1)


# ------------------------------------------------------------------ IncomingMessage


def test_incoming_reads_what_struct_pack_wrote():
    payload = (
        struct.pack("<?if", True, -3, 0.5)
        + struct.pack("<i3f", 3, 1.0, 2.0, 3.0)
        + struct.pack("<i5s", 5, b"hello")
    )
    msg = IncomingMessage(payload)
    assert msg.read_bool() is True
    assert msg.read_int32() == -3
    assert msg.read_float32() == 0.5
    assert msg.read_float32_list() == [1.0, 2.0, 3.0]
    assert msg.read_string() == "hello"
    assert msg.offset == len(payload)


def test_incoming_defaults_only_when_exhausted():
    msg = IncomingMessage(struct.pack("<i", 9))
    assert msg.read_int32(default_value=-1) == 9  # present: the default is ignored
    assert msg.read_bool(default_value=True) is True
    assert msg.read_int32(default_value=4) == 4
    assert msg.read_float32(default_value=2.5) == 2.5
    assert msg.read_string(default_value="none") == "none"
    default_list = [1.0]
    result = msg.read_float32_list(default_value=default_list)
    assert result == [1.0] and result is not default_list
    assert msg.offset == 4  # defaults never move the offset


@pytest.mark.parametrize(
    ("payload", "read", "match"),
    [
        (b"", "read_bool", "cannot read bool at offset 0: needs 1 bytes, 0 remain"),
        (b"\x01\x02", "read_int32", "cannot read int32 at offset 0: needs 4 bytes, 2 remain"),
        (b"\x01", "read_float32", "cannot read float32 at offset 0: needs 4 bytes, 1 remain"),
        (struct.pack("<i", 5) + b"ab", "read_string", "string of 5 bytes at offset 4"),
        (struct.pack("<i", -1), "read_string", "expected a length >= 0, got -1"),
        (struct.pack("<i", -2), "read_float32_list", "expected a length >= 0, got -2"),
        (struct.pack("<if", 2, 1.0), "read_float32_list", "list of 2 values at offset 4"),
        (struct.pack("<i", 2**30), "read_float32_list", "needs 4294967296 bytes, 0 remain"),
        (struct.pack("<i", 1) + b"\xff", "read_string", "expected ASCII bytes, got byte 0xff"),
    ],
)
def test_incoming_truncated_or_malformed_raises_and_keeps_offset(payload, read, match):
    msg = IncomingMessage(payload)
    with pytest.raises(SideChannelError, match=match):
        getattr(msg, read)()
    assert msg.offset == 0


def test_incoming_partial_value_raises_even_with_a_default():
    msg = IncomingMessage(b"\x01\x02")
    with pytest.raises(SideChannelError, match="needs 4 bytes, 2 remain"):
        msg.read_int32(default_value=0)


def test_incoming_accepts_bytes_likes_and_validates_offset():
    assert IncomingMessage(bytearray(b"\x01"), offset=1).read_bool(default_value=False) is False
    assert IncomingMessage(memoryview(b"\x00\x01"), offset=1).read_bool() is True
    with pytest.raises(SideChannelError, match=r"0 <= offset <= 1, got 2"):
        IncomingMessage(b"\x01", offset=2)
    with pytest.raises(SideChannelTypeError, match="got str"):
        IncomingMessage("abc")


def test_get_raw_bytes_is_a_copy_of_the_whole_message():
    msg = IncomingMessage(b"\x01\x02\x03", offset=2)
    raw = msg.get_raw_bytes()
    assert raw == bytearray(b"\x01\x02\x03")
    raw[0] = 9
    assert msg.buffer == b"\x01\x02\x03"


_VALUE = st.one_of(
    st.tuples(st.just("bool"), st.booleans()),
    st.tuples(st.just("int32"), st.integers(-(2**31), 2**31 - 1)),
    st.tuples(st.just("float32"), st.floats(width=32, allow_nan=False)),
    st.tuples(st.just("float32_list"), st.lists(st.floats(width=32, allow_nan=False))),
    st.tuples(st.just("string"), st.text(alphabet=st.characters(max_codepoint=127))),
)


@given(st.lists(_VALUE, max_size=12))
def test_round_trip_of_any_value_sequence(values):
    out = OutgoingMessage()
    for kind, value in values:
        getattr(out, f"write_{kind}")(value)
    msg = IncomingMessage(out.buffer)
    assert [getattr(msg, f"read_{kind}")() for kind, _ in values] == [v for _, v in values]
    assert msg.offset == len(out.buffer)


@given(
    st.binary(max_size=64),
    st.lists(st.sampled_from(["bool", "int32", "float32", "float32_list", "string"])),
)
def test_reading_arbitrary_bytes_raises_only_side_channel_errors(payload, reads):
    msg = IncomingMessage(payload)
    for kind in reads:
        before = msg.offset
        try:
            getattr(msg, f"read_{kind}")()
        except SideChannelError:
            assert msg.offset == before
        assert msg.offset <= len(payload)


# ------------------------------------------------------------------ SideChannel


def test_side_channel_validates_its_id_and_messages():
    with pytest.raises(SideChannelTypeError, match="expected a uuid.UUID, got str"):
        RecordingChannel(str(RAW_ID))
    channel = RecordingChannel(RAW_ID)
    with pytest.raises(SideChannelTypeError, match="expected an OutgoingMessage, got bytes"):
        channel.queue_message_to_send(b"abc")


def test_queued_message_is_not_changed_by_later_writes():
    channel = RecordingChannel(RAW_ID)
    msg = OutgoingMessage()
    msg.write_int32(1)
    channel.queue_message_to_send(msg)
    msg.write_int32(2)
    assert channel.message_queue == [struct.pack("<i", 1)]


# ------------------------------------------------------------------ SideChannelManager


def test_generate_frames_every_channel_in_order_and_clears_queues():
    first, second = RawBytesChannel(RAW_ID), RawBytesChannel(OTHER_ID)
    manager = SideChannelManager([first, second])
    second.send_raw_data(b"\x05")
    first.send_raw_data(b"ab")
    first.send_raw_data(b"")
    data = manager.generate_side_channel_messages()
    assert data == frame(RAW_ID, b"ab") + frame(RAW_ID, b"") + frame(OTHER_ID, b"\x05")
    assert first.message_queue == [] and second.message_queue == []
    assert manager.generate_side_channel_messages() == bytearray()


def test_frame_header_is_bytes_le_of_the_channel_id():
    # Literal bytes: C#'s Guid.ToByteArray() order, first three groups byte-swapped.
    channel = RawBytesChannel(uuid.UUID("e951342c-4f7e-11ea-b238-784f4387d1f7"))
    channel.send_raw_data(b"\xaa")
    data = SideChannelManager([channel]).generate_side_channel_messages()
    assert data.hex() == "2c3451e97e4fea11b238784f4387d1f7" + "01000000" + "aa"


def test_process_dispatches_each_frame_to_its_channel():
    first, second = RecordingChannel(RAW_ID), RecordingChannel(OTHER_ID)
    manager = SideChannelManager([first, second])
    manager.process_side_channel_message(
        frame(OTHER_ID, b"x") + frame(RAW_ID, b"yz") + frame(OTHER_ID, b"")
    )
    assert first.received == [b"yz"]
    assert second.received == [b"x", b""]


def test_round_trip_through_two_channels():
    stats, props = StatsSideChannel(), FloatPropertiesChannel()
    manager = SideChannelManager([props, stats])
    props.set_property("speed", 3.0)
    sent = manager.generate_side_channel_messages()
    # The simulation answers with the property echoed back and a statistic.
    stat = OutgoingMessage()
    stat.write_string("score")
    stat.write_float32(7.0)
    stat.write_int32(1)
    reply = bytes(sent) + frame(stats.channel_id, stat.buffer)
    fresh = FloatPropertiesChannel()
    SideChannelManager([fresh, stats]).process_side_channel_message(reply)
    assert fresh.get_property("speed") == 3.0
    assert stats.get_and_reset_stats()["score"][0][0] == 7.0


def test_unknown_channel_warns_and_others_still_receive():
    known = RecordingChannel(RAW_ID)
    manager = SideChannelManager([known])
    data = frame(OTHER_ID, b"abc") + frame(RAW_ID, b"d")
    with pytest.warns(UserWarning, match=f"3-byte message for channel id {OTHER_ID}"):
        manager.process_side_channel_message(data)
    assert known.received == [b"d"]


def test_no_channels_and_empty_data():
    manager = SideChannelManager()
    manager.process_side_channel_message(b"")
    assert manager.generate_side_channel_messages() == bytearray()
    assert SideChannelManager(None).generate_side_channel_messages() == bytearray()


def test_duplicate_channel_ids_are_rejected():
    with pytest.raises(SideChannelError, match=f"channel id {RAW_ID}, already used by"):
        SideChannelManager([RawBytesChannel(RAW_ID), RecordingChannel(RAW_ID)])
    with pytest.raises(SideChannelError, match="already used by StatsSideChannel"):
        SideChannelManager._get_side_channels_dict([StatsSideChannel(), StatsSideChannel()])


def test_manager_rejects_non_channels_but_accepts_duck_typed_ones():
    with pytest.raises(SideChannelTypeError, match=r"side_channels\[1\]: expected a SideChannel"):
        SideChannelManager([StatsSideChannel(), object()])
    with pytest.raises(SideChannelTypeError, match="expected a list of side channels"):
        SideChannelManager(StatsSideChannel())

    class DuckChannel:  # e.g. written against mlagents_envs' own base class
        channel_id = RAW_ID

        def __init__(self):
            self.message_queue = []
            self.received = []

        def on_message_received(self, msg):
            self.received.append(msg.read_string())

    duck = DuckChannel()
    manager = SideChannelManager([duck])
    manager.process_side_channel_message(frame(RAW_ID, struct.pack("<i2s", 2, b"ok")))
    assert duck.received == ["ok"]


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (RAW_ID.bytes_le[:10], "offset 0: truncated header, needs 20 bytes .* 10 remain"),
        (frame(RAW_ID, b"ab") + b"\x00" * 19, "offset 22: truncated header.* 19 remain"),
        (RAW_ID.bytes_le + struct.pack("<i", -1), "expected a payload length >= 0, got -1"),
        (RAW_ID.bytes_le + struct.pack("<i", 5) + b"abc", "declares a 5-byte payload, 3 bytes"),
    ],
)
def test_malformed_frames_raise_with_offsets_and_deliver_nothing(data, match):
    channel = RecordingChannel(RAW_ID)
    manager = SideChannelManager([channel])
    with pytest.raises(SideChannelError, match=match):
        manager.process_side_channel_message(data)
    assert channel.received == []


def test_process_rejects_non_bytes():
    with pytest.raises(SideChannelTypeError, match="got str"):
        SideChannelManager().process_side_channel_message("abc")


def _stat_payload(key: str, value: float, code: int) -> bytes:
    return struct.pack(f"<i{len(key)}sfi", len(key), key.encode(), value, code)


_FRAMES = st.lists(
    st.tuples(
        st.sampled_from(["raw", "stats", "props"]),
        st.binary(max_size=24),
    ),
    min_size=1,
    max_size=5,
)


def _managed_channels():
    raw, stats, props = RecordingChannel(RAW_ID), StatsSideChannel(), FloatPropertiesChannel()
    ids = {"raw": RAW_ID, "stats": stats.channel_id, "props": props.channel_id}
    return SideChannelManager([raw, stats, props]), ids


@settings(max_examples=300)
@given(st.binary(max_size=200))
def test_random_bytes_raise_only_side_channel_errors(data):
    manager, _ = _managed_channels()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # unknown channel ids are expected here
        try:
            manager.process_side_channel_message(data)
        except SideChannelError:
            pass


@settings(max_examples=300)
@given(_FRAMES)
def test_random_payloads_for_known_channels_raise_only_side_channel_errors(frames):
    """Well-framed garbage reaching the built-in channels' readers."""
    manager, ids = _managed_channels()
    blob = b"".join(frame(ids[name], payload) for name, payload in frames)
    try:
        manager.process_side_channel_message(blob)
    except SideChannelError:
        pass


@settings(max_examples=300)
@given(
    st.lists(st.tuples(st.text("abc", max_size=5), st.floats(width=32)), min_size=1, max_size=4),
    st.data(),
)
def test_truncated_valid_frames_raise_or_deliver_a_whole_prefix(stats_list, data):
    frames = [
        frame(StatsSideChannel().channel_id, _stat_payload(key, value, 2))
        for key, value in stats_list
    ]
    blob = b"".join(frames)
    cut = data.draw(st.integers(0, len(blob) - 1))
    boundaries = [sum(len(f) for f in frames[:i]) for i in range(len(frames) + 1)]
    stats = StatsSideChannel()
    manager = SideChannelManager([stats])
    if cut in boundaries:
        manager.process_side_channel_message(blob[:cut])
        received = sum(len(v) for v in stats.get_and_reset_stats().values())
        assert received == boundaries.index(cut)
    else:
        with pytest.raises(SideChannelError, match="side-channel frame at offset"):
            manager.process_side_channel_message(blob[:cut])
        assert stats.get_and_reset_stats() == {}


def test_process_accepts_a_non_contiguous_memoryview():
    channel = RecordingChannel(RAW_ID)
    data = np.frombuffer(frame(RAW_ID, b"abc"), dtype=np.uint8)
    interleaved = np.zeros(2 * data.size, dtype=np.uint8)
    interleaved[::2] = data
    SideChannelManager([channel]).process_side_channel_message(memoryview(interleaved[::2]))
    assert channel.received == [b"abc"]
