"""Embedders: the offline MiniLM default, sentence-transformers and litellm adapters.

Importing this package is cheap: onnxruntime, tokenizers, torch and litellm are imported only when
an embedder first embeds (or, for litellm, when it is resolved from a string).

Example:
    >>> from sagewai.embeddings import MiniLMEmbedder, resolve_embedder
    >>> resolve_embedder("minilm").dimension
    384
"""

from sagewai.core._embedder import Embedder, Vector, Vectors, normalize_rows
from sagewai.embeddings._litellm import LiteLLMEmbedder
from sagewai.embeddings._minilm import MiniLMEmbedder
from sagewai.embeddings._resolve import resolve_embedder
from sagewai.embeddings._sentence_transformers import SentenceTransformerEmbedder

__all__ = [
    "Embedder",
    "LiteLLMEmbedder",
    "MiniLMEmbedder",
    "SentenceTransformerEmbedder",
    "Vector",
    "Vectors",
    "normalize_rows",
    "resolve_embedder",
]
