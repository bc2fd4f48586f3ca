"""Reading sources: each format into clean text, each refusal with its exact message."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.flows.ingest import SourceRefused, read_source
from tests.ingest_helpers import SOURCE_MD, make_pdf, write_source

ARTICLE = "".join(
    f"<p>Paragraph {i}: the committee reviewed the proposal for the new river bridge and "
    "agreed that the construction should start in the spring after the floods.</p>"
    for i in range(6)
)
NAV = "".join(f'<li><a href="/p{i}">Menu entry number {i}</a></li>' for i in range(60))
PAGE = (
    "<html><head><title>Bridge report | City news</title></head><body>"
    f"<nav><ul>{NAV}</ul></nav><main><article><h1>Bridge report</h1>{ARTICLE}</article></main>"
    f"<footer><ul>{NAV}</ul></footer></body></html>"
)


def refusal(path: Path, **kw: int) -> SourceRefused:
    with pytest.raises(SourceRefused) as caught:
        read_source(path, **kw)
    return caught.value


def test_markdown_is_read_as_is_with_its_heading_as_title(tmp_path: Path) -> None:
    source = read_source(write_source(tmp_path))
    assert source.kind == "markdown"
    assert source.title == "Installing Rust"
    assert "rustup update" in source.text
    assert source.boilerplate_removed == 0.0
    assert len(source.sha256) == 64


def test_html_keeps_the_article_and_drops_navigation(tmp_path: Path) -> None:
    path = tmp_path / "bridge.html"
    path.write_text(PAGE)
    source = read_source(path)
    assert source.kind == "html"
    assert source.title == "Bridge report | City news"
    assert "river bridge" in source.text
    assert "Menu entry" not in source.text
    assert source.boilerplate_removed > 0.5


def test_pdf_text_layer_is_read(tmp_path: Path) -> None:
    path = tmp_path / "paper.pdf"
    path.write_bytes(make_pdf(["The bridge opens in May after two years of work.", "Page two."]))
    source = read_source(path)
    assert source.kind == "pdf" and source.pages == 2
    assert "The bridge opens in May" in source.text


def test_scanned_pdf_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "scan.pdf"
    path.write_bytes(make_pdf(["", ""]))
    err = refusal(path)
    assert err.reason == "pdf_no_text"
    assert str(err) == (
        f"{path} has no text layer (0 words on 2 pages): it looks scanned — run OCR on it "
        "first (e.g. ocrmypdf), then ingest the result."
    )


def test_encrypted_pdf_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "locked.pdf"
    path.write_bytes(make_pdf(["Secret text of the locked document."], encrypted=True))
    err = refusal(path)
    assert err.reason == "pdf_encrypted"
    assert str(err) == (
        f"{path} is encrypted (password-protected) — save an unprotected copy and ingest that."
    )


def test_broken_pdf_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "broken.pdf"
    path.write_bytes(b"%PDF-1.4\nthis is not a pdf at all")
    err = refusal(path)
    assert err.reason == "pdf_unreadable"
    assert str(err).startswith(f"{path} is not a readable PDF (")


def test_navigation_only_html_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "menu.html"
    path.write_text(f"<html><body><nav><ul>{NAV}</ul></nav></body></html>")
    err = refusal(path)
    assert err.reason == "html_navigation"
    assert str(err).startswith(f"{path} is mostly navigation: no main text found (")
    assert str(err).endswith(
        "— save the article itself (reader view or print to PDF) and ingest that."
    )


def test_file_over_the_size_cap_is_refused(tmp_path: Path) -> None:
    path = write_source(tmp_path, text=SOURCE_MD * 40)
    err = refusal(path, max_bytes=4096)
    assert err.reason == "too_large"
    size = path.stat().st_size / 1048576
    assert str(err) == (
        f"{path} is {size:.1f} MiB; the limit is 0 MiB — split it, or ingest the chapter you need."
    )


@pytest.mark.parametrize(
    ("name", "data", "reason", "message"),
    [
        ("missing.md", None, "missing", "{p} does not exist — check the path."),
        (
            "image.png",
            b"\x89PNG",
            "unsupported",
            "{p}: .png files are not supported — ingest a Markdown (.md), text (.txt), HTML "
            "(.html) or PDF (.pdf) file.",
        ),
        ("blank.txt", b"  \n\n", "empty", "{p} is empty — there is nothing to ingest."),
        (
            "latin.txt",
            "caf\u00e9 ol\u00e9".encode("latin-1"),
            "not_text",
            "{p} is not UTF-8 text (byte 3 cannot be read) — re-save it as UTF-8.",
        ),
        (
            "binary.md",
            b"\x00\x01\x02 binary",
            "not_text",
            "{p} is binary, not text — save it as Markdown, text, HTML or PDF.",
        ),
    ],
)
def test_bad_files_are_refused_with_a_clear_reason(
    tmp_path: Path, name: str, data: bytes | None, reason: str, message: str
) -> None:
    path = tmp_path / name
    if data is not None:
        path.write_bytes(data)
    err = refusal(path)
    assert err.reason == reason
    assert str(err) == message.format(p=path)


def test_a_folder_is_refused(tmp_path: Path) -> None:
    err = refusal(tmp_path)
    assert (err.reason, str(err)) == (
        "not_a_file",
        f"{tmp_path} is not a file — give one document to ingest.",
    )


def test_xhtml_with_an_encoding_declaration_is_measured(tmp_path: Path) -> None:
    path = tmp_path / "policy.html"
    path.write_text('<?xml version="1.0" encoding="utf-8"?>\n' + PAGE)
    source = read_source(path)
    assert "river bridge" in source.text
    # the raw word count is the page's visible text, not its markup
    assert source.words_raw < 2 * source.words_kept + 600
    assert source.boilerplate_removed > 0.5
