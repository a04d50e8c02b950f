"""The one place a short string becomes an embedder.

Why a resolver: configuration files and command lines carry strings, while the library injects
instances. Keeping the mapping in one function keeps the accepted forms documented, and every
backend is imported only when its form is asked for, so ``"fake"`` never loads onnxruntime.
"""

from __future__ import annotations

from sagewai.core._embedder import Embedder
from sagewai.errors import InvalidInputError

__all__ = ["ACCEPTED_EMBEDDER_SPECS", "resolve_embedder"]

ACCEPTED_EMBEDDER_SPECS: tuple[str, ...] = (
    "None or 'minilm' (the offline default)",
    "'fake' or 'fake:<dimension>' (deterministic test embedder)",
    "'sentence-transformers' or 'sentence-transformers:<model path or cached name>'",
    "'litellm:<model>' (e.g. 'litellm:openai/text-embedding-3-small')",
    "an Embedder instance (returned unchanged)",
)


def _invalid(spec: object, reason: str) -> InvalidInputError:
    forms = "; ".join(ACCEPTED_EMBEDDER_SPECS)
    return InvalidInputError(f"cannot resolve embedder {spec!r}: {reason}. Accepted forms: {forms}")


def _fake(spec: str, argument: str | None) -> Embedder:
    from sagewai.embeddings._fake import FakeEmbedder

    if argument is None:
        return FakeEmbedder()
    if not argument.isascii() or not argument.isdigit():
        raise _invalid(spec, f"the fake dimension {argument!r} is not a whole number")
    dimension = int(argument)
    if not 8 <= dimension <= 65_536:
        raise _invalid(spec, f"the fake dimension must be in 8..65536, got {dimension}")
    return FakeEmbedder(dimension)


def _litellm(spec: str, model: str | None) -> Embedder:
    if not model:
        example = "'litellm:openai/text-embedding-3-small'"
        raise _invalid(spec, f"'litellm:' needs a model, e.g. {example}")
    from sagewai.embeddings._litellm import LiteLLMEmbedder, _import_litellm

    litellm = _import_litellm("resolve_embedder('litellm:...')")
    try:
        dimension = litellm.get_model_info(model).get("output_vector_size")
    except Exception:  # litellm raises a bare Exception for models missing from its price list
        dimension = None
    if not isinstance(dimension, int) or dimension < 1:
        raise _invalid(
            spec,
            f"litellm does not know the vector size of {model!r}; construct "
            f"LiteLLMEmbedder({model!r}, dimension=...) instead",
        )
    return LiteLLMEmbedder(model, dimension)


def resolve_embedder(spec: str | Embedder | None = None) -> Embedder:
    """Turn a configuration value into an :class:`~sagewai.embeddings.Embedder`.

    Args:
        spec: One of the forms in :data:`ACCEPTED_EMBEDDER_SPECS`. The prefix is case-insensitive;
            the part after the first ``:`` is passed on verbatim.

    Returns:
        The embedder; nothing is loaded yet (models load on first use).

    Raises:
        InvalidInputError: If the spec is not one of the accepted forms; the message lists them.
        MissingDependencyError: If the chosen embedder's extra is not installed (litellm only:
            the others fail at first use).

    Example:
        >>> resolve_embedder("fake:32").dimension
        32
        >>> type(resolve_embedder(None)).__name__
        'MiniLMEmbedder'
    """
    if spec is None:
        from sagewai.embeddings._minilm import MiniLMEmbedder

        return MiniLMEmbedder()
    if not isinstance(spec, str):
        if isinstance(spec, Embedder):
            return spec
        raise _invalid(spec, f"expected a string, None or an Embedder, got {type(spec).__name__}")
    kind, separator, argument = spec.strip().partition(":")
    kind = kind.strip().lower()
    value = argument.strip() if separator else None
    if kind == "minilm" and not separator:
        from sagewai.embeddings._minilm import MiniLMEmbedder

        return MiniLMEmbedder()
    if kind == "fake":
        return _fake(spec, value)
    if kind in {"sentence-transformers", "sentence_transformers"}:
        from sagewai.embeddings._sentence_transformers import SentenceTransformerEmbedder

        if separator and not value:
            raise _invalid(spec, "'sentence-transformers:' needs a model path after the colon")
        return SentenceTransformerEmbedder(value)
    if kind == "litellm":
        return _litellm(spec, value)
    raise _invalid(spec, "unknown form")
