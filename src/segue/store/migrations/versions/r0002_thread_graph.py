"""The app-thread graph: app threads, runs, provider threads and their revisions
(native id, file, coverage, status), context transfers, handoffs and strategy decisions. Every
table is append-only.

Revision 0002, after 0001.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from segue.store.migrations.shapes import create_table

revision = "0002"
down_revision = "0001"


def upgrade() -> None:
    create_table(
        "app_threads",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("title", sa.Text(), nullable=True),
        sa.Column("cwd", sa.Text(), nullable=True),
        sa.Column("parent_thread_id", sa.Text(), nullable=True),
        sa.Column("parent_run_ordinal", sa.Integer(), nullable=True),
        refers={"parent_thread_id": "app_threads"},
    )
    create_table(
        "provider_threads",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("thread_id", sa.Text(), nullable=False),
        sa.Column("provider", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("origin", sa.Text(), nullable=False),
        refers={"thread_id": "app_threads"},
        indexes=[["thread_id"]],
    )
    create_table(
        "context_transfers",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("thread_id", sa.Text(), nullable=False),
        sa.Column("type", sa.Text(), nullable=False),
        sa.Column("source_provider_thread_id", sa.Text(), nullable=True),
        sa.Column("target_provider_thread_id", sa.Text(), nullable=True),
        sa.Column("source_run_ordinal", sa.Integer(), nullable=True),
        sa.Column("resolution", sa.Text(), nullable=False),
        sa.Column("status", sa.Text(), nullable=False),
        sa.Column("supersedes", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        refers={
            "source_provider_thread_id": "provider_threads",
            "supersedes": "context_transfers",
            "target_provider_thread_id": "provider_threads",
            "thread_id": "app_threads",
        },
        unique="supersedes",
        indexes=[["thread_id"]],
    )
    create_table(
        "decisions",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("thread_id", sa.Text(), nullable=False),
        sa.Column("target_provider", sa.Text(), nullable=False),
        sa.Column("strategy", sa.Text(), nullable=False),
        sa.Column("form", sa.Text(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("provider_thread_id", sa.Text(), nullable=True),
        sa.Column("covers_from", sa.Integer(), nullable=True),
        sa.Column("covers_to", sa.Integer(), nullable=True),
        sa.Column("inputs", sa.JSON(none_as_null=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        refers={"provider_thread_id": "provider_threads", "thread_id": "app_threads"},
        indexes=[["thread_id"]],
    )
    create_table(
        "provider_thread_revisions",
        sa.Column("provider_thread_id", sa.Text(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("native_id", sa.Text(), nullable=False),
        sa.Column("path", sa.Text(), nullable=False),
        sa.Column("native_turns", sa.Integer(), nullable=False),
        sa.Column("status", sa.Text(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("model", sa.Text(), nullable=True),
        sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
        key=("provider_thread_id", "version"),
        refers={"provider_thread_id": "provider_threads"},
        indexes=[["native_id"]],
    )
    create_table(
        "runs",
        sa.Column("thread_id", sa.Text(), nullable=False),
        sa.Column("ordinal", sa.Integer(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("provider", sa.Text(), nullable=False),
        sa.Column("provider_thread_id", sa.Text(), nullable=False),
        sa.Column("native_turn", sa.Integer(), nullable=False),
        sa.Column("handoff_id", sa.Text(), nullable=True),
        sa.Column("status", sa.Text(), nullable=False),
        sa.Column("prompt", sa.Text(), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
        key=("thread_id", "ordinal", "version"),
        refers={"provider_thread_id": "provider_threads", "thread_id": "app_threads"},
    )
    create_table(
        "context_handoffs",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("transfer_id", sa.Text(), nullable=True),
        sa.Column("thread_id", sa.Text(), nullable=False),
        sa.Column("target_run_ordinal", sa.Integer(), nullable=True),
        sa.Column("from_provider_threads", sa.JSON(none_as_null=True), nullable=False),
        sa.Column("to_provider_thread_id", sa.Text(), nullable=False),
        sa.Column("covers_from", sa.Integer(), nullable=False),
        sa.Column("covers_to", sa.Integer(), nullable=False),
        sa.Column("strategy", sa.Text(), nullable=False),
        sa.Column("form", sa.Text(), nullable=False),
        sa.Column("text", sa.Text(), nullable=True),
        sa.Column("items", sa.JSON(none_as_null=True), nullable=True),
        sa.Column("status", sa.Text(), nullable=False),
        sa.Column("created_by_provider", sa.Text(), nullable=True),
        sa.Column("supersedes", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        refers={
            "supersedes": "context_handoffs",
            "thread_id": "app_threads",
            "to_provider_thread_id": "provider_threads",
            "transfer_id": "context_transfers",
        },
        unique="supersedes",
        indexes=[["thread_id"]],
    )


def downgrade() -> None:
    for table in (  # (their indexes go with them)
        "context_handoffs",
        "runs",
        "provider_thread_revisions",
        "decisions",
        "context_transfers",
        "provider_threads",
        "app_threads",
    ):
        op.drop_table(table)
