#!/usr/bin/env python3
"""bench/wal-frames.py: how many WAL frames (dirty pages) a commit of the standard scenario writes, and on which B-tree.

Replays the standard scenario's churn (10,000 members in 1,000 rooms; each commit one leave and the rejoin of the
member who left in the commit before, as the rooms thread's ~2 commands per commit at 1,000 joins/s) against
Parlor's own schema (Migrations/0*.sql, applied in order) with the statements the rooms thread runs, through the
system's SQLite with the writer's settings (WAL, synchronous=NORMAL, a 4 MiB cache, foreign keys on). After a
warm-up the WAL is truncated, COMMITS commits run, and each frame's page is mapped to its table or index through
the dbstat table. No server, no timing: the counts are deterministic for a seed. `--sql` runs extra statements
after the migrations, to try a schema change before writing its migration (e.g. `--sql "DROP INDEX
members_by_room"`).
"""
import argparse, collections, glob, os, random, sqlite3, struct, tempfile

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--commits", type=int, default=10000, help="measured commits (10,000)")
parser.add_argument("--warm-up", type=int, default=20000, help="commits before the measured ones (20,000)")
parser.add_argument("--rooms", type=int, default=1000)
parser.add_argument("--members", type=int, default=10000, help="members, spread round-robin over the rooms")
parser.add_argument("--sql", action="append", default=[], help="a statement run after the migrations (repeatable)")
parser.add_argument("--random-member-ids", action="store_true", help="member ids of 128 random bits (before 953aa8b)")
parser.add_argument("--seed", type=int, default=7)
args = parser.parse_args()

migrations = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Migrations")
work = tempfile.mkdtemp(prefix="wal-frames.")
path = os.path.join(work, "parlor.db")
db = sqlite3.connect(path, isolation_level=None)
db.execute("PRAGMA journal_mode=WAL")
for pragma in ("wal_autocheckpoint=0", "cache_size=-4096", "synchronous=NORMAL"):
    db.execute("PRAGMA " + pragma)
for migration in sorted(glob.glob(os.path.join(migrations, "0*.sql"))):
    db.executescript("BEGIN;" + open(migration).read() + ";COMMIT;")
for statement in args.sql:
    db.execute(statement)
db.execute("PRAGMA foreign_keys=ON")

rnd = random.Random(args.seed)
clock = [1_796_000_000_000]  # Unix ms; one per command, as the rooms' clock moves on


def opaque(prefix):
    return f"{prefix}-{rnd.getrandbits(128):032x}"


def member_id():
    clock[0] += 1
    if args.random_member_ids:
        return opaque("MEM")
    return f"MEM-{clock[0]:012x}{rnd.getrandbits(80):020x}"


rooms = [opaque("RM") for _ in range(args.rooms)]
users = [opaque("USR") for _ in range(args.members)]
joined = {}  # user index -> member id


def append_event(room, event_type, member, user):  # SQLiteRoomTransaction.appendEvent
    seq = db.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM events WHERE room_id = ?", (room,)).fetchone()[0]
    body = f'{{"member_id":"{member}","user":{{"id":"{user}","name":"user"}}}}'
    db.execute("INSERT INTO events (room_id, seq, type, from_member, body, created_at) VALUES (?, ?, ?, ?, ?, ?)",
               (room, seq, event_type, member, body, clock[0]))


def join(user):  # addMember, then member:joined
    room, member = rooms[user % len(rooms)], member_id()
    db.execute("INSERT INTO members (id, room_id, user_id, state, joined_at) VALUES (?, ?, ?, 'JOINED', ?)",
               (member, room, users[user], clock[0]))
    append_event(room, "member:joined", member, users[user])
    joined[user] = member


def leave(user):  # endMembership, then member:left
    room, member = rooms[user % len(rooms)], joined.pop(user)
    db.execute("UPDATE members SET state = 'LEFT', left_at = ?, left_reason = 'left', disconnected_at = NULL "
               "WHERE id = ? AND state = 'JOINED'", (clock[0], member))
    append_event(room, "member:left", member, users[user])


db.execute("BEGIN")
for index, user in enumerate(users):
    db.execute("INSERT INTO users (id, name, created_at) VALUES (?, ?, 0)", (user, f"user{index}"))
for index, room in enumerate(rooms):
    db.execute("INSERT INTO rooms (id, name, display_name, created_at) VALUES (?, ?, ?, 0)", (room, f"room{index}", f"room{index}"))
for user in range(args.members):
    join(user)
db.execute("COMMIT")

rejoining = None


def churn(commits):
    global rejoining
    for _ in range(commits):
        db.execute("BEGIN IMMEDIATE")
        if rejoining is not None:
            join(rejoining)
        while (leaving := rnd.randrange(args.members)) not in joined:  # the one rejoining is the only one out
            pass
        leave(leaving)
        rejoining = leaving
        db.execute("COMMIT")


churn(args.warm_up)
db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
churn(args.commits)

owner = {page: name for name, page in db.execute("SELECT name, pageno FROM dbstat")}
frames = collections.Counter()
with open(path + "-wal", "rb") as wal:
    wal.seek(32)  # the WAL header; then each frame is a 24-byte header (page number first) and the page
    page_size = db.execute("PRAGMA page_size").fetchone()[0]
    while len(header := wal.read(24)) == 24:
        frames[owner.get(struct.unpack(">I", header[:4])[0], "(freed)")] += 1
        wal.seek(page_size, 1)
total = sum(frames.values())
print(f"{total / args.commits:.2f} WAL frames per commit (one leave and one join), {args.commits} commits, "
      f"database {os.path.getsize(path) / 1e6:.1f} MB")
for name, count in frames.most_common():
    print(f"  {name:30} {count / args.commits:5.2f}")
for leftover in glob.glob(path + "*"):
    os.remove(leftover)
os.rmdir(work)
