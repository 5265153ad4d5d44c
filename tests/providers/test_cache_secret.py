"""The response cache's keys are made with a secret of this user's (providers/cache_secret.py): answers
planted in a results folder by someone else are never served. Keys were a plain SHA-256 of the request,
and an answer planted in `.cache` was reported as the model's with no call (found by the eighth attack
round; the cache is on by default for the editor's Run lenses)."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from fakeprovider import FakeProvider

from evalspec.jsonio import dumps_bytes
from evalspec.providers import ChatRequest, ResponseCache, cache_key, provider_for_model
from evalspec.providers.cache_secret import cache_secret, secret_path


@pytest.fixture
def own_secret(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """No EVALSPEC_CACHE_KEY: the secret is made in (a temporary) XDG_CACHE_HOME."""
    monkeypatch.delenv("EVALSPEC_CACHE_KEY", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    cache_secret.cache_clear()
    yield tmp_path / "xdg" / "evalspec" / "cache-key"
    cache_secret.cache_clear()


def _plain_key(identity: dict[str, object], req: ChatRequest) -> str:
    """The key as it was (and as anyone can compute it): a SHA-256 of the canonical request."""
    doc = {"v": 1, "provider": identity, "model": req.model, "system": req.system,
           "messages": [[m.role, m.content] for m in req.messages], "temperature": req.temperature,
           "max_tokens": req.max_tokens, "extra": req.extra}
    blob = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


async def test_an_answer_planted_in_the_cache_is_not_served(fake: FakeProvider, client, env, tmp_path,
                                                            own_secret: Path) -> None:
    path = tmp_path / "results" / ".cache" / "responses.jsonl"
    b = provider_for_model("openai:m", client=client, env=env, cache=ResponseCache(path))
    req = ChatRequest.of("m", "Is the bridge safe?")
    identity = b.provider.identity()
    planted = {"text": "Yes, entirely safe.", "usage": {"input_tokens": 1, "output_tokens": 1}}
    b.provider.cache.close()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(dumps_bytes({"k": k, "t": 0, "r": planted}) + b"\n"
                              for k in (_plain_key(identity, req), hashlib.sha256(b"anything").hexdigest())))
    again = provider_for_model("openai:m", client=client, env=env, cache=ResponseCache(path))
    answer = await again.provider.chat(req)
    assert fake.count == 1 and not answer.cached and answer.text != planted["text"]
    assert (await again.provider.chat(req)).cached  # the real answer is cached, under this user's key
    assert fake.count == 1


def test_the_secret_is_made_once_and_kept_private(own_secret: Path) -> None:
    first = cache_secret()
    assert own_secret.is_file() and secret_path() == own_secret
    assert stat.S_IMODE(own_secret.stat().st_mode) == 0o600 and len(own_secret.read_bytes()) == 64
    assert stat.S_IMODE(own_secret.parent.stat().st_mode) == 0o700
    cache_secret.cache_clear()
    assert cache_secret() == first  # the next process reads the same one: the cache is reused
    req = ChatRequest.of("m", "hi")
    key = cache_key({"name": "openai"}, req)
    os.environ["EVALSPEC_CACHE_KEY"] = "shared by our CI runners"
    try:
        cache_secret.cache_clear()
        assert cache_key({"name": "openai"}, req) != key  # another secret: another key
        shared = cache_key({"name": "openai"}, req)
        cache_secret.cache_clear()
        assert cache_key({"name": "openai"}, req) == shared  # the same secret elsewhere: the same key
    finally:
        del os.environ["EVALSPEC_CACHE_KEY"]


@pytest.mark.parametrize("planted", ["link", "readable by others", "short"])
def test_a_secret_file_someone_else_could_know_is_not_used(own_secret: Path, tmp_path: Path, planted: str) -> None:
    """A secret file that is a link (to a file the planter wrote), readable by others, or too short to be
    one of ours is not used: this process keeps a secret of its own and the file is left as it is."""
    own_secret.parent.mkdir(parents=True)
    known = b"k" * 64
    if planted == "link":
        (tmp_path / "known").write_bytes(known)
        own_secret.symlink_to(tmp_path / "known")
    else:
        own_secret.write_bytes(known if planted != "short" else b"k" * 8)
        own_secret.chmod(0o644 if planted == "readable by others" else 0o600)
    assert cache_secret() not in (known, b"k" * 8)
    cache_secret.cache_clear()
    assert cache_secret() not in (known, b"k" * 8)
