"""The scratch copy of the repository that mutations are applied to, so that the working tree
is never touched: target/mutations/tree, kept between runs so that sbt compiles incrementally.
"""

from __future__ import annotations

import filecmp
import os
import shutil
import subprocess
from pathlib import Path

# Too large to copy or not part of the sources: linked to the working tree's instead.
LINKED = (".venv", "tests/judge/bin")
MANIFEST = ".mutations-manifest"


def sources(root: Path) -> list[str]:
    """What git would see in the working tree: tracked files and untracked ones not ignored."""
    out = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=root,
        check=True,
        capture_output=True,
    ).stdout
    return sorted(p for p in out.decode().split("\0") if p and (root / p).is_file())


def sync(root: Path, copy: Path) -> None:
    """Makes `copy` hold the working tree's sources as they are now (uncommitted changes
    included), copying only files that differ: unchanged files keep their timestamps and sbt
    recompiles nothing for them.
    """
    files = sources(root)
    copy.mkdir(parents=True, exist_ok=True)
    manifest = copy / MANIFEST
    before = set(manifest.read_text().splitlines()) if manifest.exists() else set()
    for gone in before - set(files):
        (copy / gone).unlink(missing_ok=True)
    for f in files:
        src, dst = root / f, copy / f
        if not dst.exists() or not filecmp.cmp(src, dst, shallow=False):
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
    manifest.write_text("\n".join(files) + "\n")
    for link in LINKED:
        dst = copy / link
        if not dst.is_symlink():
            dst.parent.mkdir(parents=True, exist_ok=True)
            if dst.exists():
                shutil.rmtree(dst)
            os.symlink(root / link, dst)
