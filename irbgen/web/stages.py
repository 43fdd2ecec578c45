"""Build stages on the web side: cited URL -> fetched, extracted WebDocument."""

from __future__ import annotations

import functools

from pydantic import BaseModel

from irbgen.errors import IrbgenError
from irbgen.pipeline.stage import StageContext, WorkerCrashed, WorkTimedOut, offload
from irbgen.records import Reject
from irbgen.web.extract import extract_document
from irbgen.web.records import WebDocument
from irbgen.wikipedia.records import Citation


class FetchCited:
    """Fetch one cited URL through context.fetcher and extract its main text (callers de-duplicate URLs).

    Extraction runs on the executor's worker processes (`offload`), never on a thread: a page whose
    extraction kills its worker is a Reject "extract_crashed", one past the time limit "extract_timeout".
    Keys are URLs, so a pool may spread the stage over processes, each host on one (`by_host`).
    """

    name = "fetch_cited"
    by_host = True  # see irbgen.pipeline.host_shards
    input_model = Citation
    output_model = WebDocument
    extract = staticmethod(extract_document)  # what runs on a worker; tests put a faulty one here

    def key(self, record: BaseModel) -> str:
        """The cited URL."""
        return _citation(record, self.name).url

    async def aprocess(self, record: BaseModel, context: StageContext) -> list[BaseModel | Reject]:
        """A WebDocument, or a Reject labelled with the fetch or extraction reason."""
        citation = _citation(record, self.name)
        url = citation.url
        fetcher = context.fetcher
        if fetcher is None:
            error = IrbgenError(f"stage {self.name} needs a fetcher in its StageContext")
            error.fatal = True  # type: ignore[attr-defined]  # the runner stops instead of rejecting each URL
            raise error
        outcome = await fetcher.fetch(url, date=citation.date, archive_url=citation.archive_url)
        if not outcome.ok:
            extra: dict[str, object] = {"final_url": outcome.final_url}
            if outcome.status is not None:
                extra["status"] = outcome.status
            return [
                Reject(stage=self.name, reason=outcome.reason, key=url, detail=outcome.detail, extra=extra)
            ]
        extract = functools.partial(
            self.extract,
            url,
            outcome.final_url,
            outcome.status or 0,
            outcome.headers,
            outcome.body,
            outcome.warc_date or "",
            warc_record_id=outcome.warc_record_id,
            via_wayback=outcome.via_wayback,
            content_type=outcome.content_type,
            stage=self.name,
        )
        try:
            return [await offload(context, extract)]
        except WorkerCrashed as error:
            return [Reject(stage=self.name, reason="extract_crashed", key=url, detail=str(error))]
        except WorkTimedOut as error:
            return [Reject(stage=self.name, reason="extract_timeout", key=url, detail=str(error))]


def _citation(record: BaseModel, stage: str) -> Citation:
    """The record as a Citation, or a TypeError naming the stage."""
    if not isinstance(record, Citation):
        raise TypeError(f"{stage} takes Citation records, got {type(record).__name__}")
    return record
