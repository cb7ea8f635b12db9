"""Refresh or check the Swagger UI and Redoc files that trioframe ships for its documentation
pages (``trioframe/_openapi/assets/``).

    python scripts/refresh_docs_assets.py           # download the pinned versions, copy, hash
    python scripts/refresh_docs_assets.py --check   # verify the shipped files (no network)

Refreshing runs ``npm pack`` for each pinned package (the npm registry; ``npm`` must be on the
PATH), extracts only the files the pages need and their licences, applies ``PATCHES``, and
writes ``manifest.json``: each package's version and the registry's integrity of its tarball,
each file's source in the tarball and its sha256. ``--check`` recomputes the hashes of the
shipped files and compares them and the versions with the manifest and the pins here; it exits
1 and names every difference. To move to a new version, change ``PACKAGES`` and refresh.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import pathlib
import shutil
import subprocess
import sys
import tarfile
import tempfile

ASSETS = pathlib.Path(__file__).resolve().parents[1] / "trioframe" / "_openapi" / "assets"
MANIFEST = ASSETS / "manifest.json"

#: npm package -> its exact pinned version.
PACKAGES = {"swagger-ui-dist": "5.35.0", "redoc": "2.5.4"}

#: shipped file name -> (package, path inside the tarball's ``package/`` directory).
FILES = {
    "swagger-ui-bundle.js": ("swagger-ui-dist", "swagger-ui-bundle.js"),
    "swagger-ui.css": ("swagger-ui-dist", "swagger-ui.css"),
    "swagger-ui-bundle.js.LICENSE.txt": ("swagger-ui-dist", "swagger-ui-bundle.js.LICENSE.txt"),
    "swagger-ui-dist.LICENSE": ("swagger-ui-dist", "LICENSE"),
    "swagger-ui-dist.NOTICE": ("swagger-ui-dist", "NOTICE"),
    "redoc.standalone.js": ("redoc", "bundles/redoc.standalone.js"),
    "redoc.standalone.js.LICENSE.txt": ("redoc", "bundles/redoc.standalone.js.LICENSE.txt"),
    "redoc.LICENSE": ("redoc", "LICENSE"),
}

#: An empty SVG image: what the Redocly logo in Redoc's sidebar shows instead.
_EMPTY_SVG = "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg'/%3E"

#: shipped file name -> (text replaced, replacement, why). Each text must occur exactly once.
PATCHES = {
    "redoc.standalone.js": [
        (
            '"https://cdn.redoc.ly/redoc/logo-mini.svg"',
            f'"{_EMPTY_SVG}"',
            "the sidebar's Redocly logo is loaded from Redocly's CDN; the pages stay offline",
        )
    ]
}


def sha256(path: pathlib.Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def npm_pack(package: str, version: str, into: pathlib.Path) -> tuple[pathlib.Path, str]:
    """Download ``package@version``'s tarball into ``into``; return its path and integrity."""
    result = subprocess.run(
        ["npm", "pack", f"{package}@{version}", "--json", "--pack-destination", str(into)],
        check=True,
        capture_output=True,
        text=True,
    )
    (packed,) = json.loads(result.stdout)
    if packed["version"] != version:
        raise SystemExit(f"npm packed {package} {packed['version']}, not {version}")
    return into / packed["filename"], packed["integrity"]


def patch(name: str, path: pathlib.Path) -> list[str]:
    """Apply ``PATCHES[name]`` to the file at ``path``; return why, one line each."""
    text = path.read_text(encoding="utf-8")
    reasons = []
    for old, new, why in PATCHES.get(name, []):
        if text.count(old) != 1:
            raise SystemExit(f"{name}: expected {old!r} once, found it {text.count(old)} times")
        text = text.replace(old, new)
        reasons.append(why)
    path.write_text(text, encoding="utf-8")
    return reasons


def refresh() -> None:
    """Download the pinned packages and replace the shipped files and the manifest."""
    manifest: dict[str, dict[str, dict[str, object]]] = {"packages": {}, "files": {}}
    with tempfile.TemporaryDirectory() as scratch:
        work = pathlib.Path(scratch)
        for package, version in PACKAGES.items():
            tarball, integrity = npm_pack(package, version, work)
            with tarfile.open(tarball) as archive:
                archive.extractall(work / package, filter="data")
            manifest["packages"][package] = {"version": version, "integrity": integrity}
        ASSETS.mkdir(parents=True, exist_ok=True)
        for old in manifest_names():  # (a file no longer shipped must not linger)
            (ASSETS / old).unlink(missing_ok=True)
        for name, (package, source) in FILES.items():
            target = ASSETS / name
            shutil.copyfile(work / package / "package" / source, target)
            entry: dict[str, object] = {"package": package, "source": source}
            reasons = patch(name, target)
            if reasons:
                entry["patched"] = reasons
            entry["sha256"] = sha256(target)
            manifest["files"][name] = entry
    MANIFEST.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {len(FILES)} files and {MANIFEST.name} into {ASSETS}")


def manifest_names() -> set[str]:
    """The files the current manifest lists (the ones a refresh replaces)."""
    if not MANIFEST.exists():
        return set()
    return set(json.loads(MANIFEST.read_text(encoding="utf-8"))["files"])


def check() -> list[str]:
    """Every difference between the pins, the manifest and the shipped files."""
    if not MANIFEST.exists():
        return [f"{MANIFEST} is missing: run this script without --check"]
    manifest = json.loads(MANIFEST.read_text(encoding="utf-8"))
    problems = []
    for package, version in PACKAGES.items():
        shipped = manifest["packages"].get(package, {}).get("version")
        if shipped != version:
            problems.append(f"{package}: pinned {version}, the manifest says {shipped}")
    if set(manifest["files"]) != set(FILES):
        problems.append(f"the manifest lists {sorted(manifest['files'])}, not {sorted(FILES)}")
    for name, entry in sorted(manifest["files"].items()):
        path = ASSETS / name
        if not path.is_file():
            problems.append(f"{name}: missing")
        elif sha256(path) != entry["sha256"]:
            problems.append(f"{name}: sha256 {sha256(path)}, the manifest says {entry['sha256']}")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="verify, download nothing")
    if parser.parse_args(argv).check:
        problems = check()
        for problem in problems:
            print(problem, file=sys.stderr)
        print("docs assets: " + ("MISMATCH" if problems else "ok"))
        return 1 if problems else 0
    refresh()
    return 0


if __name__ == "__main__":
    sys.exit(main())
