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
down_revision = "0003"


def upgrade() -> None:
    for name in ("strategy", "summary", "resume_command"):
        op.add_column("batch_agents", sa.Column(name, sa.Text(), nullable=True))
    op.add_column("batch_agents", sa.Column("warnings", sa.JSON(none_as_null=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("batch_agents", schema=None) as batch_op:
        for name in ("warnings", "resume_command", "summary", "strategy"):
            batch_op.drop_column(name)
