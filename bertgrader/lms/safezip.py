"""Reading an LMS's zip as untrusted data: which members may be read at all, and reading one within a cap.

A member's name is never used as a path here: the importer writes each notebook to a path it builds from the
student's id and the assignment, so no name can place a file anywhere. Names are still checked, and a member
that no honest LMS download holds is skipped and named: an absolute name, a name with a ``..`` part, a
symbolic link, a name that is not UTF-8. A member's size is checked before it is read (the size the zip
declares) and while it is read (what comes out), so a zip bomb costs at most ``max_bytes``.
"""
from __future__ import annotations

import stat
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from bertgrader.submission import MAX_NOTEBOOK_BYTES

MiB = 1 << 20
MAX_MEMBER_BYTES = MAX_NOTEBOOK_BYTES  # a notebook: the grader refuses a larger one anyway (32 MiB)
MAX_TOTAL_BYTES = 2048 * MiB  # everything one import reads
UTF8_FLAG = 0x800  # the zip's "names are UTF-8" bit; without it Python decodes a name as cp437
SKIPPED_QUIETLY = ("__MACOSX/",)  # what macOS's Finder adds when someone re-zips a download


class NotAZip(ValueError):
    """The file is not a zip archive that can be read; the message says which file."""


class TooLarge(ValueError):
    """A member, or all members together, unpacked to more than the cap."""


@dataclass
class Member:
    name: str  # the member's name, decoded (UTF-8)
    info: zipfile.ZipInfo


def open_zip(path: Path) -> zipfile.ZipFile:
    path = Path(path)
    if not path.is_file():
        raise NotAZip(f"{path}: no such file")
    try:
        return zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as e:
        raise NotAZip(f"{path} is not a zip archive ({e}): pass the zip the LMS's download gave") from None


def _decoded(info: zipfile.ZipInfo) -> str | None:
    """The member's name as UTF-8, or None. Zips written without the UTF-8 flag (older Windows tools) often
    hold UTF-8 anyway; a name that is not UTF-8 either way is refused."""
    if info.flag_bits & UTF8_FLAG or info.filename.isascii():
        return info.filename
    try:
        return info.filename.encode("cp437").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return None


def why_refused(name: str | None, info: zipfile.ZipInfo, max_bytes: int) -> str | None:
    """Why this member may not be read, or None."""
    if name is None:
        return "its name is not UTF-8"
    if "\x00" in name or "\\" in name:
        return "its name holds a NUL or a backslash"
    p = PurePosixPath(name)
    if p.is_absolute() or (len(name) > 1 and name[1] == ":"):
        return "its name is absolute"
    if ".." in p.parts:
        return "its name has a '..' part"
    mode = info.external_attr >> 16
    if mode and stat.S_IFMT(mode) not in (0, stat.S_IFREG, stat.S_IFDIR):
        return "it is a symbolic link or a special file, not a file"
    if info.flag_bits & 0x1:
        return "it is encrypted"
    if info.file_size > max_bytes:
        return f"it unpacks to {info.file_size:,} bytes, more than the {max_bytes:,} allowed"
    return None


def members(zf: zipfile.ZipFile, max_bytes: int = MAX_MEMBER_BYTES) -> tuple[list[Member], list[str]]:
    """(the files that may be read, a line for each member skipped and why). Folders are neither."""
    ok, skipped = [], []
    for info in zf.infolist():
        if info.filename.startswith(SKIPPED_QUIETLY) or PurePosixPath(info.filename).name == ".DS_Store":
            continue
        name = _decoded(info)
        why = why_refused(name, info, max_bytes)
        if why:
            skipped.append(f"{ascii(info.filename)}: skipped, {why}")
        elif not info.is_dir():
            ok.append(Member(name, info))
    return ok, skipped


class Budget:
    """What one import may still read, across all its members."""

    def __init__(self, total: int = MAX_TOTAL_BYTES):
        self.left = total


def read(zf: zipfile.ZipFile, member: Member, budget: Budget, max_bytes: int = MAX_MEMBER_BYTES) -> bytes:
    """The member's bytes, counted as they come out: TooLarge past ``max_bytes`` or the budget, whatever the
    zip declared; zipfile raises BadZipFile on a corrupt member (its CRC is checked at the end)."""
    chunks, n = [], 0
    with zf.open(member.info) as fh:
        while chunk := fh.read(1 << 16):
            n += len(chunk)
            if n > max_bytes:
                raise TooLarge(f"{member.name} unpacks to more than {max_bytes:,} bytes")
            if n > budget.left:
                raise TooLarge(f"{member.name}: the zip unpacks to more than the import's cap in all")
            chunks.append(chunk)
    budget.left -= n
    return b"".join(chunks)
