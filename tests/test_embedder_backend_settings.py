"""Choosing the embedding server: in settings.json and on the command line."""

from __future__ import annotations

import json
import socket
import stat
from pathlib import Path

import pytest

from desktop.cli.common import embedder_choice
from desktop.cli.main import build_parser, main
from desktop.flows.settings import (
    EmbedderBackendSettings,
    Settings,
    SettingsInvalid,
    load_settings,
    save_settings,
    settings_path,
)


def test_default_is_the_bundled_embedder() -> None:
    s = Settings()
    assert s.embedder_backend.kind == "embedded"
    rs = s.runtime_settings()
    assert rs.embedder_backend == "embedded" and rs.embedder_http is None


def test_http_choice_round_trips_and_reaches_the_runtime() -> None:
    s = Settings(
        embedder_backend=EmbedderBackendSettings(
            kind="http", base_url="http://127.0.0.1:11434/v1", model="nomic-embed-text"
        )
    )
    save_settings(s)
    assert load_settings() == s
    rs = load_settings().runtime_settings()
    assert rs.embedder_backend == "http" and rs.embedder_http is not None
    assert rs.embedder_http.base_url == "http://127.0.0.1:11434/v1"
    assert rs.embedder_http.model == "nomic-embed-text"


def test_an_api_key_makes_the_file_owner_only() -> None:
    s = Settings(
        embedder_backend=EmbedderBackendSettings(
            kind="http", base_url="http://127.0.0.1:1/v1", api_key="sekret"
        )
    )
    path = save_settings(s)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


@pytest.mark.parametrize(
    ("url", "leaves"),
    [
        ("http://127.0.0.1:8080/v1", False),
        ("http://localhost:8765/v1", False),
        ("http://192.168.1.20:8080/v1", True),
        ("https://gpu-box.lan/v1", True),
    ],
)
def test_leaves_machine_only_for_non_loopback_hosts(url: str, leaves: bool) -> None:
    assert EmbedderBackendSettings(kind="http", base_url=url).leaves_machine is leaves


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ({"kind": "gpu"}, "embedder_backend.kind must be 'embedded' or 'http', not 'gpu'"),
        ({"kind": "http"}, "embedder_backend.base_url must be an http(s) URL"),
        ({"kind": "http", "base_url": "127.0.0.1:8080"}, "must be an http(s) URL"),
        ({"kind": "http", "base_url": 8080}, "embedder_backend.base_url has the wrong type"),
    ],
)
def test_bad_values_in_the_file_are_named_and_the_file_kept(
    section: dict[str, object], message: str
) -> None:
    path = settings_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps({"embedder_backend": section})
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SettingsInvalid, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_settings()
    assert path.read_text(encoding="utf-8") == text


def _args(*argv: str) -> object:
    return build_parser().parse_args(["index", *argv])


def test_cli_flags_override_the_saved_choice() -> None:
    save_settings(
        Settings(
            embedder_backend=EmbedderBackendSettings(
                kind="http", base_url="http://127.0.0.1:9/v1", model="saved", api_key="k"
            )
        )
    )
    saved = embedder_choice(_args())  # type: ignore[arg-type]
    assert saved.base_url == "http://127.0.0.1:9/v1" and saved.model == "saved"
    flagged = embedder_choice(
        _args("--embedder-url", "http://127.0.0.1:8/v1", "--embedder-model", "other")  # type: ignore[arg-type]
    )
    assert (flagged.base_url, flagged.model, flagged.api_key) == (
        "http://127.0.0.1:8/v1",
        "other",
        "k",
    )
    assert embedder_choice(_args("--embedder-backend", "embedded")).kind == "embedded"  # type: ignore[arg-type]


def test_url_alone_implies_http() -> None:
    choice = embedder_choice(_args("--embedder-url", "http://127.0.0.1:8/v1"))  # type: ignore[arg-type]
    assert choice.kind == "http"


def test_http_without_url_is_one_clear_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["index", "--vault", str(tmp_path), "--embedder-backend", "http"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == (
        "antinomy: --embedder-backend http needs --embedder-url (e.g. http://127.0.0.1:8080/v1)."
    )


def test_unreachable_server_is_exit_69_and_nothing_indexed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "a.md").write_text("# A\nSomething.\n", encoding="utf-8")
    code = main(["index", "--vault", str(vault), "--embedder-url", f"http://127.0.0.1:{port}/v1"])
    assert code == 69
    err = capsys.readouterr().err
    assert f"Cannot reach the embedding server at http://127.0.0.1:{port}/v1" in err
    assert not (vault / ".antinomy").exists()


def test_a_remote_server_is_announced_before_anything_is_sent(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from desktop.cli.common import embedder_override

    choice = embedder_override(_args("--embedder-url", "http://192.168.1.20:8080/v1"))  # type: ignore[arg-type]
    assert choice.kind == "http" and choice.base_url == "http://192.168.1.20:8080/v1"
    err = capsys.readouterr().err
    assert "the embedding server http://192.168.1.20:8080/v1 is not on this machine" in err


def test_models_lists_the_server_instead_of_a_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models", "--json", "--embedder-url", "http://127.0.0.1:8/v1"]) == 0
    records = json.loads(capsys.readouterr().out)["models"]
    embedder = next(r for r in records if r["kind"] == "embedder")
    assert embedder == {
        "kind": "embedder",
        "server": "http://127.0.0.1:8/v1",
        "model": None,
        "leaves_machine": False,
    }
    # The other models are still resolved from their files.
    assert {r["kind"] for r in records} == {"llm", "embedder", "judge", "note_model"}
    assert [r.get("role") for r in records if r["kind"] == "judge"] == [None, "guard"]
