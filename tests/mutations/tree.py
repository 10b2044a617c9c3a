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
# The build's outputs, copied from the working tree into a copy that has none (make test's
# sample, after its Scala suites compiled everything): the copy's first compile is then
# incremental, not a whole build. Zinc records paths relative to the build's root and sources by
# their hashes; the assembly jars are left out.
BUILT = (
    "project/target",
    "project/project",
    "connector-scala/target/scala-2.13",
    "connector-scala/target/streams",
    "connector-scala/target/protobuf_external",
)


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


def seed_build(root: Path, copy: Path) -> None:
    """Copies the working tree's compiled outputs into `copy` where it has none of its own."""
    for d in BUILT:
        src, dst = root / d, copy / d
        if src.is_dir() and not dst.exists():
            shutil.copytree(src, dst, symlinks=True, ignore=shutil.ignore_patterns("*assembly*.jar"))
