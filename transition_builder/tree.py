"""The span tree of one trace, with orphans repaired, and the rollout's root.

A span whose parent never arrived (a lost export, a parent still open, a parent in a process
that does not trace) would cut its subtree off the rollout and lose, say, an LLM call's agent.
Such an orphan is attached under the tightest span of the same trace whose time interval
encloses it, since that is where it ran; with no enclosing span it goes under the root.
"""

from __future__ import annotations

from tracerl import semconv

from .spans import Span


class SpanTree:
    def __init__(self, spans: list[Span]):
        self.spans = sorted(spans, key=lambda s: (s.start_ns, -s.duration_ns))
        self.by_id = {s.span_id: s for s in self.spans}
        self.parent: dict[str, str] = {}  # span id -> parent span id ('' at the top)
        self.orphans_repaired = 0
        self.root = self._find_root()
        self._link()

    def _find_root(self) -> Span | None:
        """The `tracerl.rollout` span; else the earliest span without a parent; else None
        (the root has not arrived: the rollout is unfinished, or its root is outside the trace)."""
        for span in self.spans:
            if span.name == semconv.SPAN_ROLLOUT:
                return span
        for span in self.spans:
            if not span.parent_id:
                return span
        return None

    def _link(self) -> None:
        orphans = []
        for span in self.spans:
            if not span.parent_id or span.parent_id in self.by_id:
                self.parent[span.span_id] = span.parent_id
            else:
                orphans.append(span)
        # Outermost first, so an orphan's own orphaned children can find it as their enclosure.
        for orphan in sorted(orphans, key=lambda s: -s.duration_ns):
            self.parent[orphan.span_id] = self._enclosing(orphan)
            self.orphans_repaired += bool(self.parent[orphan.span_id])  # else it stays a top span

    def _enclosing(self, orphan: Span) -> str:
        best = None
        for span in self.spans:
            if span is orphan or span.span_id not in self.parent:
                continue
            if span.start_ns <= orphan.start_ns and span.end_ns >= orphan.end_ns:
                if (best is None or span.duration_ns < best.duration_ns) and not self._is_below(span, orphan):
                    best = span
        if best is not None:
            return best.span_id
        if self.root is not None and self.root is not orphan:
            return self.root.span_id
        return ""

    def _is_below(self, span: Span, ancestor: Span) -> bool:
        current = span.span_id
        for _ in range(len(self.spans) + 1):
            if current == ancestor.span_id:
                return True
            current = self.parent.get(current, "")
            if not current:
                return False
        return True  # a cycle: treat as below, never link into it

    def ancestors(self, span: Span):
        """The spans above ``span``, nearest first."""
        current = self.parent.get(span.span_id, "")
        for _ in range(len(self.spans)):
            if not current:
                return
            above = self.by_id.get(current)
            if above is None:
                return
            yield above
            current = self.parent.get(current, "")

    def depth(self, span: Span) -> int:
        return sum(1 for _ in self.ancestors(span))
