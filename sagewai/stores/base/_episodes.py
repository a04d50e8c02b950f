"""What every episode store shares: validation, summaries, embedding, ranking and forgetting.

Backends implement a narrow core (``_put``, ``_load``, ``_keyword``, ``_recent``, ``_vectors``,
``_delete``); everything a user calls lives here once, so the in-memory, SQLite and PostgreSQL
stores behave alike and pass one conformance suite.

Search is hybrid: a keyword list (each backend's full-text index) and a dense list (cosine of the
query against each candidate's summary vector), fused by reciprocal rank. The dense side scores
only the candidate set ``keyword hits ∪ most recent episodes`` (``candidates`` of each), computed
in Python with numpy, identically for every backend: no backend here has a vector index
(PostgreSQL runs without pgvector), and one shared scorer keeps the rankings congruent.
"""

from __future__ import annotations

import json
import math
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from pydantic import JsonValue, ValidationError

from sagewai.core._arguments import check_int
from sagewai.core._conversation import ChatMessage, MessageLike
from sagewai.core._embedder import Embedder, Vector
from sagewai.core._episode_records import (
    Episode,
    EpisodeFilter,
    EpisodeRedaction,
    json_mentions,
    mentions,
    message_mentions,
    subject_pattern,
)
from sagewai.core._resource import Resource
from sagewai.core._scope import validate_identifier
from sagewai.core._text import clean_json, clean_text, keyword_terms
from sagewai.errors import ConfigurationError, InvalidInputError
from sagewai.stores.base._summary import (
    EpisodeSummarizer,
    ExtractiveSummarizer,
    summary_not_naming,
)

__all__ = ["MAX_EPISODE_CHARS", "MAX_EPISODE_MESSAGES", "EpisodeStoreBase", "rank_episodes"]

MAX_EPISODE_MESSAGES = 10_000
MAX_EPISODE_CHARS = 2_000_000
MAX_QUERY_CHARS = 4_000
_ALL_EPISODES = 10_000_000
_EPISODE_PAGE = 200


def rank_episodes(
    query_vector: Vector | None,
    vectors: Mapping[str, Vector],
    keyword: Sequence[tuple[str, float]],
    *,
    limit: int,
    rrf_k: float = 60.0,
) -> list[tuple[str, float]]:
    """Fuse the dense and keyword rankings of episode candidates by reciprocal rank.

    Args:
        query_vector: The embedded query (``None`` when there is nothing to embed).
        vectors: Candidate ids to their summary vectors; vectors of another dimension are skipped.
        keyword: ``(id, keyword score)`` best first.
        limit: How many results.
        rrf_k: The RRF constant.

    Returns:
        ``(id, score)`` best first, scores in ``[0, 1]``; ties broken by cosine, then id.

    Example:
        >>> import numpy as np
        >>> q = np.array([1.0, 0.0], dtype=np.float32)
        >>> rank_episodes(q, {"a": np.array([0.0, 1.0], dtype=np.float32),
        ...                   "b": np.array([1.0, 0.0], dtype=np.float32)}, [("a", 2.0)], limit=2)
        [('a', 0.991935), ('b', 0.5)]
    """
    cosine: dict[str, float] = {}
    if query_vector is not None and vectors:
        ids = [i for i, v in vectors.items() if v.shape == query_vector.shape]
        if ids:
            matrix = np.stack([vectors[i] for i in ids])
            for fact_id, value in zip(ids, matrix @ query_vector, strict=True):
                cosine[fact_id] = float(value)
    dense = sorted(cosine, key=lambda i: (-cosine[i], i))
    fused: dict[str, float] = {}
    for rank, episode_id in enumerate(dense):
        fused[episode_id] = fused.get(episode_id, 0.0) + 1.0 / (rrf_k + 1 + rank)
    for rank, (episode_id, _) in enumerate(keyword):
        fused[episode_id] = fused.get(episode_id, 0.0) + 1.0 / (rrf_k + 1 + rank)
    best = 2.0 / (rrf_k + 1)
    ranked = sorted(fused, key=lambda i: (-fused[i], -cosine.get(i, -math.inf), i))
    return [(i, round(fused[i] / best, 6)) for i in ranked[:limit]]


class EpisodeStoreBase(Resource):
    """Base class of episode stores: backends implement the core, users call the rest.

    Args:
        embedder: Embeds summaries and queries; the offline MiniLM model when omitted (loaded
            on first use, never at construction).
        summarizer: Writes summaries; :class:`ExtractiveSummarizer` when omitted. Pass
            ``LLMSummarizer(client)`` for LLM-written summaries.
        candidates: How many keyword hits and how many recent episodes a search scores.
    """

    def __init__(
        self,
        *,
        embedder: Embedder | None = None,
        summarizer: EpisodeSummarizer | None = None,
        candidates: int = 200,
    ) -> None:
        if candidates < 1:
            raise ConfigurationError("candidates must be at least 1")
        self._embedder = embedder
        self.summarizer: EpisodeSummarizer = summarizer or ExtractiveSummarizer()
        self.candidates = candidates

    @property
    def embedder(self) -> Embedder:
        """The embedder, created on first use when none was given."""
        if self._embedder is None:
            from sagewai.embeddings._minilm import MiniLMEmbedder

            self._embedder = MiniLMEmbedder()
        return self._embedder

    # ------------------------------------------------------------------ lifecycle

    async def open(self) -> None:
        """Open connections or files. Safe to call more than once."""

    async def close(self) -> None:
        """Release connections or files. Safe to call more than once."""

    async def migrate(self) -> list[str]:
        """Create or upgrade this store's tables; the versions applied (none by default)."""
        return []

    # ------------------------------------------------------------------ the core

    @abstractmethod
    async def _put(self, episode: Episode, vector: Vector) -> None:
        """Insert or replace an episode (by id) with its summary vector."""

    @abstractmethod
    async def _load(self, ids: Sequence[str], where: EpisodeFilter) -> list[Episode]:
        """Episodes with these ids that match ``where`` (any order; unknown ids left out)."""

    @abstractmethod
    async def _keyword(
        self, terms: Sequence[str], where: EpisodeFilter, limit: int | None, require_all: bool
    ) -> list[tuple[str, float]]:
        """Ids and keyword scores (best first) of episodes matching ``where`` and the terms.

        ``terms`` are :func:`keyword_terms` output (letters and digits only). With
        ``require_all`` every term must occur, otherwise any; ``limit=None`` returns all.
        """

    @abstractmethod
    async def _recent(self, where: EpisodeFilter, limit: int) -> list[str]:
        """Ids of the ``limit`` most recently created episodes matching ``where``, newest first."""

    @abstractmethod
    async def _vectors(self, ids: Sequence[str]) -> dict[str, Vector]:
        """Summary vectors by id; unknown ids left out."""

    @abstractmethod
    async def _delete(self, where: EpisodeFilter, ids: Sequence[str] | None = None) -> int:
        """Delete episodes matching ``where`` (and among ``ids`` when given); return how many."""

    # ------------------------------------------------------------------ writing

    def check_episode(
        self,
        session_id: str,
        messages: Sequence[MessageLike],
        metadata: Mapping[str, JsonValue] | None = None,
        *,
        project_id: str | None = None,
        user_id: str | None = None,
    ) -> tuple[tuple[ChatMessage, ...], dict[str, JsonValue]]:
        """Validate what :meth:`save_episode` would store, without storing it.

        Returns the messages as records and the cleaned metadata. A caller that writes other
        records first (the bridge stores a conversation's facts, then its episode) checks here
        so that a bad episode fails before anything is written.

        Raises:
            InvalidInputError: empty or oversized session, malformed messages or metadata.
        """
        validate_identifier(session_id, "session_id")
        for value, what in ((project_id, "project_id"), (user_id, "user_id")):
            if value is not None:
                validate_identifier(value, what)
        if isinstance(messages, str | bytes | Mapping) or not isinstance(messages, Sequence):
            raise InvalidInputError("messages must be a list of messages")
        if metadata is not None and not isinstance(metadata, Mapping):
            raise InvalidInputError("episode metadata must be a mapping")
        metadata = clean_json(dict(metadata or {}), "episode metadata")
        coerced = tuple(ChatMessage.coerce(message) for message in messages)
        if not coerced or all(message.is_empty for message in coerced):
            raise InvalidInputError("an episode needs at least one non-empty message")
        if len(coerced) > MAX_EPISODE_MESSAGES:
            raise InvalidInputError(f"an episode holds at most {MAX_EPISODE_MESSAGES} messages")
        if sum(len(message.content) for message in coerced) > MAX_EPISODE_CHARS:
            raise InvalidInputError(f"an episode holds at most {MAX_EPISODE_CHARS} characters")
        try:
            json.dumps(dict(metadata or {}), allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise InvalidInputError(f"episode metadata must be JSON without NaN: {exc}") from exc
        return coerced, dict(metadata)

    async def save_episode(
        self,
        session_id: str,
        messages: Sequence[MessageLike],
        metadata: Mapping[str, JsonValue] | None = None,
        project_id: str | None = None,
        user_id: str | None = None,
        *,
        episode_id: str | None = None,
        summary: str | None = None,
    ) -> str:
        """Keep a whole session as an episode and return its id.

        Args:
            session_id: The session the messages belong to.
            messages: The turns, as :class:`ChatMessage` records, OpenAI-style dicts or strings.
            metadata: JSON values kept with the episode.
            project_id: The project the episode belongs to (searches by project never see
                another project's episodes).
            user_id: The user the session was with.
            episode_id: Save under this id, replacing an episode of the same id (makes a retried
                save idempotent); a new id when omitted.
            summary: Use this summary instead of writing one.

        Raises:
            InvalidInputError: empty or oversized session, malformed messages or metadata.

        Example:
            >>> import asyncio
            >>> from sagewai.context.episodes import EpisodeStore
            >>> from sagewai.testing import FakeEmbedder
            >>> async def demo() -> str:
            ...     store = EpisodeStore(embedder=FakeEmbedder())
            ...     await store.save_episode("s1", [{"role": "user", "content": "I adopted a cat"}],
            ...                              project_id="p1")
            ...     found = await store.search_episodes("cat", project_id="p1")
            ...     return found[0].session_id
            >>> asyncio.run(demo())
            's1'
        """
        coerced, metadata = self.check_episode(
            session_id, messages, metadata, project_id=project_id, user_id=user_id
        )
        if summary is not None:
            if not isinstance(summary, str):
                raise InvalidInputError("summary must be text")
            summary = clean_text(summary)
        if summary is None:
            summary = await self.summarizer.summarize(coerced)
        fields: dict[str, Any] = {
            "session_id": session_id,
            "messages": coerced,
            "summary": summary or coerced[0].line()[:600],
            "metadata": dict(metadata or {}),
            "project_id": project_id,
            "user_id": user_id,
        }
        if episode_id is not None:
            fields["id"] = validate_identifier(episode_id, "episode_id")
        try:
            episode = Episode.model_validate(fields)
        except ValidationError as exc:
            raise InvalidInputError(f"invalid episode: {exc}") from exc
        await self._store(episode)
        return episode.id

    async def put_episode(self, episode: Episode) -> None:
        """Store an episode record as it is (id, times, summary kept), replacing one of its id.

        For restoring a backup or importing an archive; new sessions go through
        :meth:`save_episode`, which validates the messages and writes the summary.
        """
        await self._store(episode.model_copy(update={"score": None}))

    async def _store(self, episode: Episode) -> None:
        vectors = await self.embedder.embed_documents([episode.summary])
        await self.open()
        await self._put(episode, vectors[0])

    # ------------------------------------------------------------------ reading

    async def get_episode(
        self, episode_id: str, *, project_id: str | None = None
    ) -> Episode | None:
        """The episode with this id, or ``None`` (also when it belongs to another project)."""
        validate_identifier(episode_id, "episode_id")
        await self.open()
        found = await self._load([episode_id], EpisodeFilter(project_id=project_id))
        return found[0] if found else None

    async def list_episodes(
        self,
        *,
        project_id: str | None = None,
        session_id: str | None = None,
        user_id: str | None = None,
        limit: int = 100,
    ) -> list[Episode]:
        """The most recent episodes matching the filters, newest first."""
        if limit < 1:
            raise InvalidInputError("limit must be at least 1")
        await self.open()
        where = EpisodeFilter(project_id=project_id, session_id=session_id, user_id=user_id)
        ids = await self._recent(where, limit)
        by_id = {episode.id: episode for episode in await self._load(ids, where)}
        return [by_id[i] for i in ids if i in by_id]

    async def search_episodes(
        self,
        query: str,
        project_id: str | None = None,
        limit: int = 10,
        *,
        user_id: str | None = None,
    ) -> list[Episode]:
        """Episodes relevant to ``query``, best first, each with its ``score``.

        Args:
            query: Free text.
            project_id: Only this project's episodes (``None``: every episode in the store).
            limit: How many episodes.
            user_id: Only this user's episodes.

        Raises:
            InvalidInputError: empty or oversized query, or a bad limit.
        """
        if not isinstance(query, str) or not query.strip():
            raise InvalidInputError("the search query must be non-empty text")
        if len(query) > MAX_QUERY_CHARS:
            raise InvalidInputError(f"the search query is longer than {MAX_QUERY_CHARS} characters")
        check_int(limit, "limit", low=1, high=1_000)
        query = clean_text(query)
        await self.open()
        where = EpisodeFilter(project_id=project_id, user_id=user_id)
        pool = max(self.candidates, limit)
        terms = keyword_terms(query)
        keyword = await self._keyword(terms, where, pool, False) if terms else []
        recent = await self._recent(where, pool)
        ids = list(dict.fromkeys([i for i, _ in keyword] + recent))
        if not ids:
            return []
        query_vector = await self.embedder.embed_query(query)
        ranked = rank_episodes(query_vector, await self._vectors(ids), keyword, limit=limit)
        by_id = {e.id: e for e in await self._load([i for i, _ in ranked], where)}
        return [by_id[i].model_copy(update={"score": score}) for i, score in ranked if i in by_id]

    # ------------------------------------------------------------------ forgetting

    async def delete_session(
        self, session_id: str, *, project_id: str | None = None, user_id: str | None = None
    ) -> int:
        """Delete the episodes of a session (within ``project_id``, of ``user_id`` when given);
        return how many."""
        await self.open()
        return await self._delete(
            EpisodeFilter(project_id=project_id, session_id=session_id, user_id=user_id)
        )

    async def delete_user(self, user_id: str, *, project_id: str | None = None) -> int:
        """Delete the episodes of a user (within ``project_id`` when given); return how many."""
        await self.open()
        return await self._delete(EpisodeFilter(project_id=project_id, user_id=user_id))

    async def delete_project(self, project_id: str) -> int:
        """Delete every episode of a project; return how many."""
        validate_identifier(project_id, "project_id")
        await self.open()
        return await self._delete(EpisodeFilter(project_id=project_id))

    async def forget_subject(
        self,
        subject: str,
        *,
        project_id: str | None = None,
        session_id: str | None = None,
        user_id: str | None = None,
    ) -> int:
        """Remove every mention of ``subject`` from the episodes; return how many were touched.

        Messages that name the subject (in their text, speaker, name or metadata) are removed
        and the summary is rewritten from what remains; metadata naming it is dropped. An
        episode left with no message is deleted. Matching is on whole words, case-insensitively.
        ``session_id`` and ``user_id`` narrow it to those episodes (criteria combine with AND).
        See :meth:`redact_subject` for the counts and a dry run.
        """
        done = await self.redact_subject(
            subject, project_id=project_id, session_id=session_id, user_id=user_id
        )
        return done.episodes_touched

    async def redact_subject(
        self,
        subject: str,
        *,
        project_id: str | None = None,
        session_id: str | None = None,
        user_id: str | None = None,
        dry_run: bool = False,
    ) -> EpisodeRedaction:
        """:meth:`forget_subject` with its counts: episodes redacted, deleted, messages removed.

        Every episode matching the filters is read (not only the keyword index's hits), so a
        mention in a speaker or in metadata is found too. With ``dry_run`` nothing is written
        and the counts are what a real run would report.
        """
        validate_identifier(subject, "subject")
        pattern = subject_pattern(subject)
        if pattern is None:
            return EpisodeRedaction()
        await self.open()
        where = EpisodeFilter(project_id=project_id, session_id=session_id, user_id=user_id)
        redacted = deleted = removed = 0
        ids = await self._recent(where, _ALL_EPISODES)
        for start in range(0, len(ids), _EPISODE_PAGE):
            for episode in await self._load(ids[start : start + _EPISODE_PAGE], where):
                if not mentions(episode, pattern):
                    continue
                kept = tuple(m for m in episode.messages if not message_mentions(m, pattern))
                removed += len(episode.messages) - len(kept)
                if all(m.is_empty for m in kept):
                    deleted += 1
                    if not dry_run:
                        await self._delete(where, [episode.id])
                    continue
                redacted += 1
                if dry_run:
                    continue
                metadata = {
                    key: value
                    for key, value in episode.metadata.items()
                    if not (json_mentions(key, pattern) or json_mentions(value, pattern))
                }
                summary = await summary_not_naming(
                    self.summarizer, kept, lambda text: pattern.search(text) is not None
                )
                if pattern.search(summary):  # even the first line names it: a bare count
                    summary = f"{len(kept)} message(s)"
                update = {"messages": kept, "summary": summary, "metadata": metadata}
                await self._store(episode.model_copy(update=update))
        return EpisodeRedaction(
            episodes_redacted=redacted, episodes_deleted=deleted, messages_removed=removed
        )
