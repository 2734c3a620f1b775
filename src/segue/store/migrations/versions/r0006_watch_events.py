"""What ``segue watch`` saw and decided: a provider exhausted, a batch moved off it, a return
offered, done or declined, each with its reason.

Revision 0006, after 0005.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from segue.store.migrations.shapes import create_table

revision = "0006"
down_revision = "0005"


def upgrade() -> None:
    create_table(
        "watch_events",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("kind", sa.Text(), nullable=False),
        sa.Column("provider", sa.Text(), nullable=True),
        sa.Column("batch_id", sa.Text(), nullable=True),
        sa.Column("reset_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("sessions", sa.JSON(none_as_null=True), nullable=True),
        sa.Column("detail", sa.Text(), nullable=True),
        sa.Column("host", sa.Text(), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        refers={"batch_id": "batches"},
        indexes=[["at"]],
    )


def downgrade() -> None:
    op.drop_table("watch_events")  # (its index goes with it)
