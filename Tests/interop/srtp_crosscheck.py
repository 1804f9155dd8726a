#!/usr/bin/env python3
"""Cross-check of ParlorSRTP against libsrtp (PyPI's pylibsrtp, which bundles its own libsrtp).

Run by Tests/ParlorSRTPTests/SRTPCrossCheckTests.swift in `swift test`; by hand:

    .venv/bin/python Tests/interop/srtp_crosscheck.py generate DIR   # libsrtp protects: DIR/python-<profile>.bin
    .venv/bin/python Tests/interop/srtp_crosscheck.py verify DIR     # libsrtp unprotects DIR/swift-<profile>.bin

Per profile (AES_CM_128_HMAC_SHA1_80, AEAD_AES_128_GCM) a file holds the keying material (master key then master
salt) and records in delivery order: 10,000 RTP packets of three SSRCs with payloads of 20-1200 bytes, some with
CSRCs or a header extension, one stream crossing sequence 65535 -> 0 early and one late, delivered with local
reordering (at most 14 places, inside the 128-packet replay window); an SRTCP packet after every 16th RTP
packet (625); replays of one of the last 300 delivered packets and tampered copies (one bit flipped anywhere)
placed before their original, 1 % each. The receiver must give back every plain packet byte for byte and refuse
every replay and tampered copy.

File layout (big-endian): b"PSX1", profile id (u8: 1 or 7), key length (u8), key, record count (u32), then per
record: kind (u8: 0 RTP, 1 RTCP), expectation (u8: 0 accepted, 1 replay refused, 2 tampered refused), plain
length (u16) and plain bytes (empty when refused), protected length (u16) and protected bytes.
"""
import os
import random
import struct
import sys

import pylibsrtp

PROFILES = {
    "aes128-cm-hmac-sha1-80": (pylibsrtp.Policy.SRTP_PROFILE_AES128_CM_SHA1_80, 30),
    "aead-aes128-gcm": (pylibsrtp.Policy.SRTP_PROFILE_AEAD_AES_128_GCM, 28),
}
RTP_PACKETS = 10_000
ACCEPTED, REPLAY, TAMPERED = 0, 1, 2
RTP, RTCP = 0, 1


def rtp_packet(rng, ssrc, sequence, timestamp):
    csrc_count = rng.choice([0] * 9 + [rng.randint(1, 3)])
    extension = rng.random() < 0.1
    first = 0x80 | csrc_count | (0x10 if extension else 0)
    header = struct.pack("!BBHII", first, 111 | (0x80 if rng.random() < 0.05 else 0), sequence, timestamp, ssrc)
    header += b"".join(struct.pack("!I", rng.getrandbits(32)) for _ in range(csrc_count))
    if extension:
        words = rng.randint(1, 3)
        header += struct.pack("!HH", 0xBEDE, words) + rng.randbytes(4 * words)
    return header + rng.randbytes(rng.randint(20, 1200))


def rtcp_packet(rng, ssrc):
    body = rng.randbytes(4 * rng.randint(5, 50))  # sender info and report blocks, as opaque words
    return struct.pack("!BBHI", 0x80, 200, (8 + len(body)) // 4 - 1, ssrc) + body


def tamper(rng, packet):
    position = rng.randrange(len(packet))
    flipped = bytearray(packet)
    flipped[position] ^= 1 << rng.randrange(8)
    return bytes(flipped)


def schedule(rng, protect_rtp, protect_rtcp):
    """The records in delivery order: (kind, expectation, plain, protected)."""
    streams = [
        {"ssrc": rng.getrandbits(32), "sequence": 65535 - 1500, "timestamp": rng.getrandbits(32)},
        {"ssrc": rng.getrandbits(32), "sequence": 65535 - 3100, "timestamp": rng.getrandbits(32)},
        {"ssrc": rng.getrandbits(32), "sequence": rng.randrange(65536), "timestamp": rng.getrandbits(32)},
    ]
    in_order = []
    rtcp_every = 16
    for number in range(RTP_PACKETS):
        stream = rng.choice(streams)
        plain = rtp_packet(rng, stream["ssrc"], stream["sequence"], stream["timestamp"])
        stream["sequence"] = (stream["sequence"] + 1) & 0xFFFF
        stream["timestamp"] = (stream["timestamp"] + 960) & 0xFFFFFFFF
        in_order.append((RTP, plain, protect_rtp(plain)))
        if number % rtcp_every == 0:
            plain = rtcp_packet(rng, rng.choice(streams)["ssrc"])
            in_order.append((RTCP, plain, protect_rtcp(plain)))
    # Local reordering: chunks of 1-15 packets, a third of them shuffled.
    delivery = []
    position = 0
    while position < len(in_order):
        chunk = in_order[position:position + rng.randint(1, 15)]
        position += len(chunk)
        if rng.random() < 0.33:
            rng.shuffle(chunk)
        delivery.extend(chunk)
    records = []
    delivered = []
    for kind, plain, protected in delivery:
        if rng.random() < 0.01:
            records.append((kind, TAMPERED, b"", tamper(rng, protected)))
        records.append((kind, ACCEPTED, plain, protected))
        delivered.append((kind, protected))
        if rng.random() < 0.01:
            replay_kind, replayed = rng.choice(delivered[-300:])
            records.append((replay_kind, REPLAY, b"", replayed))
    return records


def write_file(path, profile_id, key, records):
    with open(path, "wb") as file:
        file.write(b"PSX1" + struct.pack("!BB", profile_id, len(key)) + key + struct.pack("!I", len(records)))
        for kind, expectation, plain, protected in records:
            file.write(struct.pack("!BBH", kind, expectation, len(plain)) + plain + struct.pack("!H", len(protected)) + protected)


def read_file(path):
    with open(path, "rb") as file:
        data = file.read()
    assert data[:4] == b"PSX1", f"{path}: not a cross-check file"
    profile_id, key_length = data[4], data[5]
    key = data[6:6 + key_length]
    offset = 6 + key_length
    (count,) = struct.unpack_from("!I", data, offset)
    offset += 4
    records = []
    for _ in range(count):
        kind, expectation, plain_length = struct.unpack_from("!BBH", data, offset)
        offset += 4
        plain = data[offset:offset + plain_length]
        offset += plain_length
        (protected_length,) = struct.unpack_from("!H", data, offset)
        offset += 2
        records.append((kind, expectation, plain, data[offset:offset + protected_length]))
        offset += protected_length
    assert offset == len(data), f"{path}: {len(data) - offset} bytes left over"
    return profile_id, key, records


def generate(directory):
    rng = random.Random(int.from_bytes(os.urandom(8), "big"))
    for name, (profile_id, key_length) in PROFILES.items():
        key = rng.randbytes(key_length)
        sender = pylibsrtp.Session(pylibsrtp.Policy(key=key, ssrc_type=pylibsrtp.Policy.SSRC_ANY_OUTBOUND, srtp_profile=profile_id))
        records = schedule(rng, sender.protect, sender.protect_rtcp)
        write_file(os.path.join(directory, f"python-{name}.bin"), profile_id, key, records)
        counts = [sum(1 for record in records if record[1] == e) for e in (ACCEPTED, REPLAY, TAMPERED)]
        print(f"generate {name}: {counts[0]} packets, {counts[1]} replays, {counts[2]} tampered")


def verify(directory):
    failures = []
    for name in PROFILES:
        profile_id, key, records = read_file(os.path.join(directory, f"swift-{name}.bin"))
        receiver = pylibsrtp.Session(pylibsrtp.Policy(key=key, ssrc_type=pylibsrtp.Policy.SSRC_ANY_INBOUND, srtp_profile=profile_id))
        outcome = {ACCEPTED: 0, REPLAY: 0, TAMPERED: 0}
        rtcp = 0
        for number, (kind, expectation, plain, protected) in enumerate(records):
            unprotect = receiver.unprotect_rtcp if kind == RTCP else receiver.unprotect
            try:
                result = unprotect(protected)
            except pylibsrtp.Error as error:
                if expectation == ACCEPTED:
                    failures.append(f"{name} record {number}: libsrtp refused a packet Swift protected: {error}")
                else:
                    outcome[expectation] += 1
                continue
            if expectation != ACCEPTED:
                failures.append(f"{name} record {number}: libsrtp accepted a {'replay' if expectation == REPLAY else 'tampered packet'}")
            elif result != plain:
                failures.append(f"{name} record {number}: libsrtp's plain packet differs from Swift's")
            else:
                outcome[ACCEPTED] += 1
                rtcp += kind == RTCP
        print(f"verify {name}: {outcome[ACCEPTED]} packets ({rtcp} RTCP) unprotected byte-exact, "
              f"{outcome[REPLAY]} replays and {outcome[TAMPERED]} tampered refused")
    for failure in failures[:20]:
        print(failure, file=sys.stderr)
    if failures:
        print(f"{len(failures)} failures", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("generate", "verify"):
        sys.exit(__doc__)
    (generate if sys.argv[1] == "generate" else verify)(sys.argv[2])
