"""The app-thread graph: app threads, runs, provider threads and their revisions
(native id, file, coverage, status), context transfers, handoffs and strategy decisions. Every
table is append-only.

Revision 0002, after 0001.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision: str | None = "0001"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "app_threads",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("title", sa.Text(), nullable=True),
        sa.Column("cwd", sa.Text(), nullable=True),
        sa.Column("parent_thread_id", sa.Text(), nullable=True),
        sa.Column("parent_run_ordinal", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(
            ["parent_thread_id"],
            ["app_threads.id"],
            name=op.f("fk_app_threads_parent_thread_id_app_threads"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_app_threads")),
    )
    op.create_table(
        "provider_threads",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("thread_id", sa.Text(), nullable=False),
        sa.Column("provider", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("origin", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["thread_id"],
            ["app_threads.id"],
            name=op.f("fk_provider_threads_thread_id_app_threads"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_provider_threads")),
    )
    with op.batch_alter_table("provider_threads", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_provider_threads_thread_id"), ["thread_id"], unique=False
        )

    op.create_table(
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
        sa.ForeignKeyConstraint(
            ["source_provider_thread_id"],
            ["provider_threads.id"],
            name=op.f("fk_context_transfers_source_provider_thread_id_provider_threads"),
        ),
        sa.ForeignKeyConstraint(
            ["supersedes"],
            ["context_transfers.id"],
            name=op.f("fk_context_transfers_supersedes_context_transfers"),
        ),
        sa.ForeignKeyConstraint(
            ["target_provider_thread_id"],
            ["provider_threads.id"],
            name=op.f("fk_context_transfers_target_provider_thread_id_provider_threads"),
        ),
        sa.ForeignKeyConstraint(
            ["thread_id"],
            ["app_threads.id"],
            name=op.f("fk_context_transfers_thread_id_app_threads"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_context_transfers")),
        sa.UniqueConstraint("supersedes", name=op.f("uq_context_transfers_supersedes")),
    )
    with op.batch_alter_table("context_transfers", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_context_transfers_thread_id"), ["thread_id"], unique=False
        )

    op.create_table(
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
        sa.ForeignKeyConstraint(
            ["provider_thread_id"],
            ["provider_threads.id"],
            name=op.f("fk_decisions_provider_thread_id_provider_threads"),
        ),
        sa.ForeignKeyConstraint(
            ["thread_id"], ["app_threads.id"], name=op.f("fk_decisions_thread_id_app_threads")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_decisions")),
    )
    with op.batch_alter_table("decisions", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_decisions_thread_id"), ["thread_id"], unique=False)

    op.create_table(
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
        sa.ForeignKeyConstraint(
            ["provider_thread_id"],
            ["provider_threads.id"],
            name=op.f("fk_provider_thread_revisions_provider_thread_id_provider_threads"),
        ),
        sa.PrimaryKeyConstraint(
            "provider_thread_id", "version", name=op.f("pk_provider_thread_revisions")
        ),
    )
    with op.batch_alter_table("provider_thread_revisions", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_provider_thread_revisions_native_id"), ["native_id"], unique=False
        )

    op.create_table(
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
        sa.ForeignKeyConstraint(
            ["provider_thread_id"],
            ["provider_threads.id"],
            name=op.f("fk_runs_provider_thread_id_provider_threads"),
        ),
        sa.ForeignKeyConstraint(
            ["thread_id"], ["app_threads.id"], name=op.f("fk_runs_thread_id_app_threads")
        ),
        sa.PrimaryKeyConstraint("thread_id", "ordinal", "version", name=op.f("pk_runs")),
    )
    op.create_table(
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
        sa.ForeignKeyConstraint(
            ["supersedes"],
            ["context_handoffs.id"],
            name=op.f("fk_context_handoffs_supersedes_context_handoffs"),
        ),
        sa.ForeignKeyConstraint(
            ["thread_id"],
            ["app_threads.id"],
            name=op.f("fk_context_handoffs_thread_id_app_threads"),
        ),
        sa.ForeignKeyConstraint(
            ["to_provider_thread_id"],
            ["provider_threads.id"],
            name=op.f("fk_context_handoffs_to_provider_thread_id_provider_threads"),
        ),
        sa.ForeignKeyConstraint(
            ["transfer_id"],
            ["context_transfers.id"],
            name=op.f("fk_context_handoffs_transfer_id_context_transfers"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_context_handoffs")),
        sa.UniqueConstraint("supersedes", name=op.f("uq_context_handoffs_supersedes")),
    )
    with op.batch_alter_table("context_handoffs", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_context_handoffs_thread_id"), ["thread_id"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("context_handoffs", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_context_handoffs_thread_id"))

    op.drop_table("context_handoffs")
    op.drop_table("runs")
    with op.batch_alter_table("provider_thread_revisions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_provider_thread_revisions_native_id"))

    op.drop_table("provider_thread_revisions")
    with op.batch_alter_table("decisions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_decisions_thread_id"))

    op.drop_table("decisions")
    with op.batch_alter_table("context_transfers", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_context_transfers_thread_id"))

    op.drop_table("context_transfers")
    with op.batch_alter_table("provider_threads", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_provider_threads_thread_id"))

    op.drop_table("provider_threads")
    op.drop_table("app_threads")
