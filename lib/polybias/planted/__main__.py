"""``python -m polybias.planted list|verify|retrain [KEY ...]``: the pinned planted models
of ``data/planted`` (``make planted`` retrains them from their stored specs)."""

from __future__ import annotations

import argparse
import sys

from polybias.planted import eurogest
from polybias.planted.model_store import ModelStoreError, lookup, read_manifest, store_dir
from polybias.planted.synthetic import retrain_pinned


def main(argv: list[str] | None = None) -> int:
    """List, verify (sha256) or retrain the pinned planted models; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m polybias.planted",
                                     description="The pinned planted models of data/planted.")
    parser.add_argument("action", choices=["list", "verify", "retrain"])
    parser.add_argument("keys", nargs="*", help="pinned model keys (default: all)")
    args = parser.parse_args(argv)
    manifest = read_manifest()
    keys = args.keys or sorted(manifest)
    try:
        if args.action == "retrain":
            outcome = retrain_pinned(keys, more_trainers=eurogest.TRAINERS)
            changed = [k for k, same in outcome.items() if not same]
            print(f"{len(outcome)} pinned models retrained; {len(outcome) - len(changed)} "
                  f"byte-identical, {len(changed)} changed" + (": " + ", ".join(changed) if changed else ""))
            return 0
        for key in keys:
            if lookup(key) is None:
                raise ModelStoreError(f"not pinned: {key}")
            if args.action == "list":
                spec = manifest[key]["spec"]
                print(f"{key}  {spec['kind']}  p={spec['p']:g}  seed={spec['seed']}  "
                      f"{spec['language']}  n={spec['n_sentences']}")
        if args.action == "verify":
            print(f"{len(keys)} pinned models verified (sha256) in {store_dir()}")
    except ModelStoreError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
