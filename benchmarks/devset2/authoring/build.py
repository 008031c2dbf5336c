"""Write the second development (tuning) fact set from the hand-written chats beside this file.

    .venv/bin/python benchmarks/devset2/authoring/build.py            # natural/ and MANIFEST.sha256
    .venv/bin/python benchmarks/devset2/authoring/build.py --manifest # MANIFEST.sha256 only

The first dev set's builder (benchmarks/devset/authoring/build.py: the chat markup, the annotation
schema, the parse check) pointed at the chats beside this file, for a third user in a different world.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
_SPEC = importlib.util.spec_from_file_location("devset_builder", HERE.parents[1] / "devset" / "authoring" / "build.py")
_builder = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(_builder)
_builder.configure(HERE, user="Aakash Bhandari", as_of="2025-06-30",
                   about="Second development (tuning) fact-extraction set: hand-written WhatsApp exports of one "
                         "user. Tune on this, never on benchmarks/heldout. See ../README.md.")

render, build_natural, write_manifest, manifest_files = (
    _builder.render, _builder.build_natural, _builder.write_manifest, _builder.manifest_files)

if __name__ == "__main__":
    if "--manifest" not in sys.argv:
        print(json.dumps(build_natural()["summary"], ensure_ascii=False, indent=1))
    write_manifest()
