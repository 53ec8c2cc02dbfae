"""rcformat: reads a raidfs member image the way docs/FORMAT.md describes it
(raidcore format 2), for the fault tests (faults.py): where each region of
the member lies, which data-region blocks hold written data, and what the
superblock records (error counters, the ERRORS flag, slot states).

    m = Member.read(path)      # None when no superblock copy is readable
    m.regions()                # {"sb-start": (off, len), "journal": ...}
    m.used_blocks()            # data-region blocks with a non-zero entry
    m.counters, m.errors_flag, m.slot_states, m.role, m.events

Byte offsets and lengths are in bytes; block numbers are member blocks.
Copies are chosen as a reader does (magic, format 2, the copy where its
sb_copy says, the highest events) but their XXH3 is not checked: Python
has no xxHash here, and the tests only read members that raidfs wrote.
"""
import os
import struct

BS = 4096
MAGIC = 0x424D534644494152           # "RAIDFSMB"
SLOT_STATES = ("active", "faulty", "missing", "rebuilding", "spare", "empty")
CSUM_PER_BLOCK = 511


def _u64(b, off):
    return struct.unpack_from("<Q", b, off)[0]


def _u32(b, off):
    return struct.unpack_from("<I", b, off)[0]


class Member:
    def __init__(self, path, sb, size):
        self.path = path
        self.size = size                          # bytes, as found now
        self.role = _u32(sb, 72)
        self.members = _u32(sb, 88)
        self.member_blocks = _u64(sb, 96)
        self.data_offset = _u64(sb, 104)
        self.journal_offset = _u64(sb, 112)
        self.journal_blocks = _u64(sb, 120)
        self.csum_offset = _u64(sb, 128)
        self.csum_blocks = _u64(sb, 136)
        self.events = _u64(sb, 144)
        self.device_blocks = _u64(sb, 200)
        # err_read, err_write, err_csum, repaired (offsets 272 .. 303)
        self.counters = dict(zip(("read", "write", "csum", "repaired"),
                                 struct.unpack_from("<4Q", sb, 272)))
        self.errors_flag = bool(_u32(sb, 304) & 1)
        states = (_u32(sb, 512 + 32 * i + 16) for i in range(self.members))
        self.slot_states = [SLOT_STATES[s] if s < len(SLOT_STATES)
                            else "?%d" % s for s in states]

    @staticmethod
    def read(path):
        """The member's newest readable superblock copy, or None."""
        try:
            with open(path, "rb") as f:
                size = f.seek(0, 2)
                blocks = size // BS
                best = None
                for copy, blk in enumerate((0, 1, blocks - 2, blocks - 1)):
                    if blk < 0 or (copy >= 2 and blk < 2):
                        continue
                    f.seek(blk * BS)
                    sb = f.read(BS)
                    if len(sb) < BS or _u64(sb, 0) != MAGIC:
                        continue
                    if struct.unpack_from("<H", sb, 8)[0] != 2 or \
                            _u32(sb, 172) != copy:
                        continue
                    if best is None or _u64(sb, 144) > _u64(best, 144):
                        best = sb
        except OSError:
            return None
        return Member(path, best, size) if best else None

    @staticmethod
    def copies(path):
        """{copy: events} of the copies that look valid (magic, format,
        their place) - XXH3 unchecked, as in read()."""
        out = {}
        with open(path, "rb") as f:
            blocks = f.seek(0, 2) // BS
            for copy, blk in enumerate((0, 1, blocks - 2, blocks - 1)):
                if blk < 0 or (copy >= 2 and blk < 2):
                    continue
                f.seek(blk * BS)
                sb = f.read(BS)
                if len(sb) == BS and _u64(sb, 0) == MAGIC and \
                        struct.unpack_from("<H", sb, 8)[0] == 2 and \
                        _u32(sb, 172) == copy:
                    out[copy] = _u64(sb, 144)
        return out

    def regions(self):
        """Every region of the member: name -> (byte offset, byte length).
        The superblock copies at the end are where creation put them."""
        d = self.device_blocks
        return {
            "sb-start": (0, 2 * BS),
            "journal": (self.journal_offset * BS, self.journal_blocks * BS),
            "csum": (self.csum_offset * BS, self.csum_blocks * BS),
            "data": (self.data_offset * BS, self.member_blocks * BS),
            "sb-end": ((d - 2) * BS, 2 * BS),
        }

    def used_blocks(self):
        """Member block numbers of data-region blocks whose entry in a
        sealed-looking table block is non-zero (written at least once)."""
        out = []
        with open(self.path, "rb") as f:
            f.seek(self.csum_offset * BS)
            table = f.read(self.csum_blocks * BS)
        for i in range(len(table) // BS):
            blk = table[i * BS:(i + 1) * BS]
            for j in range(CSUM_PER_BLOCK):
                if _u64(blk, 8 * j):
                    n = i * CSUM_PER_BLOCK + j
                    if n < self.member_blocks:
                        out.append(self.data_offset + n)
        return out


def size_of(path):
    try:
        return os.stat(path).st_size
    except OSError:
        return -1
