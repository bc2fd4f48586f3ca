"""Shared helpers of the ingest tests: a small vault, source files, PDFs made in code."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SUBJECT = """---
type: subject
summary: "How the toolchain is installed."
sources:
  - "[[Old notes]]"
---
# Rust toolchain

## Notes

- The toolchain is installed with rustup on every machine. — [[Old notes]]
- Cargo builds crates offline from a vendored folder. — [[Old notes]]
"""

DECISION = """---
type: decision
status: accepted
---
# Use stable Rust

We always pin the nightly compiler for every project build.
"""

SOURCE_MD = """# Installing Rust

The first step is to install Rust with rustup, a command line tool for managing versions.
Rustup downloads and installs the stable compiler and the standard library for your platform.
You should always use the stable compiler for every project build, never the nightly one.

## Updating

Once Rust is installed, updating to a newly released version is done with rustup update.
The toolchain also ships a local copy of the documentation that works offline.

```
$ rustup update
```

## Troubleshooting

To check whether Rust is installed correctly, open a shell and run the rustc version command.
"""


def make_vault(root: Path) -> Path:
    (root / "Antinomy" / "Subjects").mkdir(parents=True)
    (root / "Decisions").mkdir()
    (root / "Antinomy" / "Subjects" / "Rust toolchain.md").write_text(SUBJECT)
    (root / "Decisions" / "Use stable Rust.md").write_text(DECISION)
    (root / ".obsidian").mkdir()
    return root.resolve()


def write_source(folder: Path, name: str = "install.md", text: str = SOURCE_MD) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text)
    return path


def answer(
    *,
    title: str = "Installing Rust",
    summary: str = "Rust is installed and updated with rustup.",
    pages: list[dict[str, Any]] | None = None,
    contradictions: list[dict[str, Any]] | None = None,
) -> str:
    return json.dumps(
        {
            "title": title,
            "summary": summary,
            "pages": pages or [],
            "contradictions": contradictions or [],
        }
    )


def make_pdf(pages: list[str], *, encrypted: bool = False) -> bytes:
    """A small valid PDF, one text line per page (``""``: a page with no text layer)."""
    objects: list[bytes] = [b"<< /Type /Catalog /Pages 2 0 R >>", b""]
    kids = []
    font_ref = 3
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    for text in pages:
        escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        stream = f"BT /F1 12 Tf 72 720 Td ({escaped}) Tj ET".encode() if text else b""
        objects.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream))
        content_ref = len(objects)
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
            b"/Resources << /Font << /F1 %d 0 R >> >> >>" % (content_ref, font_ref)
        )
        kids.append(len(objects))
    objects[1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (
        b" ".join(b"%d 0 R" % k for k in kids),
        len(kids),
    )
    trailer_extra = b""
    if encrypted:
        objects.append(
            b"<< /Filter /Standard /V 1 /R 2 /P -44 /O <%s> /U <%s> >>" % (b"11" * 32, b"22" * 32)
        )
        trailer_extra = b" /Encrypt %d 0 R /ID [<%s> <%s>]" % (
            len(objects),
            b"ab" * 16,
            b"ab" * 16,
        )
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for off in offsets:
        out += b"%010d 00000 n \n" % off
    out += b"trailer\n<< /Size %d /Root 1 0 R%s >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        trailer_extra,
        xref,
    )
    return bytes(out)


#: A summary the source does not support, and why it is dropped (never sent back).
INVENTED = "Bananas grow on tall tropical plants in Rust."
INVENTED_REASON = (
    "foreign_words",
    "words not in the source: bananas, grow, tall, tropical, plants",
)

#: A page name that is not a name (a phrase cut out of the model's output), and the repair
#: error validation sends back for it.
JUNK_NAME = "scope-section-2345678901234567890123456789012345678',"
JUNK_NAME_ERROR = (
    'pages[1]: page name "scope-section-2345678901234567890123456789012345678\'," is not a '
    "page name: it holds a quote mark"
)


def junk_name_answer() -> str:
    """An answer validation refuses: its one page name is not a name."""
    return answer(pages=[{"page": JUNK_NAME, "claims": [1]}])
