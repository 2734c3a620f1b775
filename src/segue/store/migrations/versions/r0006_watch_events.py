"""What ``segue watch`` saw and decided: a provider exhausted, a batch moved off it, a return
offered, done or declined, each with its reason.

Revision 0006, after 0005.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision: str | None = "0005"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
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
        sa.ForeignKeyConstraint(
            ["batch_id"], ["batches.id"], name=op.f("fk_watch_events_batch_id_batches")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_watch_events")),
    )
    with op.batch_alter_table("watch_events", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_watch_events_at"), ["at"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("watch_events", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_watch_events_at"))
    op.drop_table("watch_events")
