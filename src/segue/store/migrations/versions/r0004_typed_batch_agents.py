"""A switched agent of a batch keeps what its switch did as typed fields: the app-thread move's
strategy, the plan's one-line summary, the resume command and the warnings. The ``switch``
column (a whole ``segue switch --json`` document, written by earlier versions) is kept for the
rows that have it and is no longer written.

Revision 0004, after 0003.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision: str | None = "0003"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    with op.batch_alter_table("batch_agents", schema=None) as batch_op:
        batch_op.add_column(sa.Column("strategy", sa.Text(), nullable=True))
        batch_op.add_column(sa.Column("summary", sa.Text(), nullable=True))
        batch_op.add_column(sa.Column("resume_command", sa.Text(), nullable=True))
        batch_op.add_column(sa.Column("warnings", sa.JSON(none_as_null=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("batch_agents", schema=None) as batch_op:
        batch_op.drop_column("warnings")
        batch_op.drop_column("resume_command")
        batch_op.drop_column("summary")
        batch_op.drop_column("strategy")
