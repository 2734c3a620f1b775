"""Batches of switched agents, one append-only row per agent.

Revision 0001, the first.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from segue.store.migrations.shapes import create_table

revision = "0001"
down_revision = None


def upgrade() -> None:
    create_table(
        "batches",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("from_provider", sa.Text(), nullable=True),
        sa.Column("to_provider", sa.Text(), nullable=True),
        sa.Column("selection", sa.JSON(), nullable=True),
        sa.Column("options", sa.JSON(), nullable=True),
        sa.Column("planned", sa.Integer(), nullable=True),
        sa.Column("host", sa.Text(), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("segue_version", sa.Text(), nullable=False),
        indexes=[["created_at"]],
    )
    create_table(
        "batch_agents",
        sa.Column("batch_id", sa.Text(), nullable=False),
        sa.Column("ordinal", sa.Integer(), nullable=False),
        sa.Column("source_provider", sa.Text(), nullable=False),
        sa.Column("source_session", sa.Text(), nullable=False),
        sa.Column("source_path", sa.Text(), nullable=True),
        sa.Column("cwd", sa.Text(), nullable=True),
        sa.Column("pane", sa.Text(), nullable=True),
        sa.Column("pid", sa.Integer(), nullable=True),
        sa.Column("state", sa.Text(), nullable=True),
        sa.Column("skipped", sa.Text(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("target_provider", sa.Text(), nullable=True),
        sa.Column("target_session", sa.Text(), nullable=True),
        sa.Column("target_path", sa.Text(), nullable=True),
        sa.Column("label", sa.Text(), nullable=True),
        sa.Column("switch", sa.JSON(), nullable=True),
        sa.Column("first_provider", sa.Text(), nullable=False),
        sa.Column("first_session", sa.Text(), nullable=False),
        sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
        key=("batch_id", "ordinal"),
        refers={"batch_id": "batches"},
        indexes=[["target_provider", "target_session"]],
    )


def downgrade() -> None:
    for table in ("batch_agents", "batches"):  # (its indexes go with it)
        op.drop_table(table)
