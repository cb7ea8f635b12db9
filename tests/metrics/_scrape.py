"""Reading a metrics page: every sample by name and labels, parsed with prometheus_client's
own parser (``text_string_to_metric_families``)."""

from __future__ import annotations

import attrs
from prometheus_client.parser import text_string_to_metric_families

from trioframe import Server

__all__ = ["Scrape", "scrape_server"]


@attrs.frozen
class Scrape:
    """One metrics page."""

    text: str

    def samples(self, name: str) -> list[tuple[dict[str, str], float]]:
        """``(labels, value)`` of every sample named ``name`` (``..._count``, ``..._total``)."""
        return [
            (dict(sample.labels), sample.value)
            for family in text_string_to_metric_families(self.text)
            for sample in family.samples
            if sample.name == name
        ]

    def value(self, name: str, **labels: str) -> float:
        """The sum of the samples named ``name`` whose labels include ``labels`` (0 for none)."""
        return sum(
            value
            for found, value in self.samples(name)
            if all(found.get(key) == wanted for key, wanted in labels.items())
        )

    def requests(self, **labels: str) -> float:
        """How many requests ``http_server_request_duration_seconds`` counted with ``labels``."""
        return self.value("http_server_request_duration_seconds_count", **labels)


def scrape_server(server: Server) -> Scrape:
    """The metrics of the app ``server`` serves, read directly (after it has stopped, too)."""
    state = server._state
    assert state is not None
    observer = state.app.observer
    assert observer is not None
    return Scrape(observer.exposition().decode())  # type: ignore[attr-defined]
