"""What segue saw on disk: per provider-thread revision, a stamp of its file (size, time, inode,
hashes of its head and last record), the turns the file held (each one's prompt hash and the
run it is), and the files it continued from (a native fork's parent, still watched); and a note
on a run (why it failed, or why it is not on the thread's line).

Revision 0003, after 0002.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision: str | None = "0002"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    with op.batch_alter_table("provider_thread_revisions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("stamp", sa.JSON(none_as_null=True), nullable=True))
        batch_op.add_column(sa.Column("turns", sa.JSON(none_as_null=True), nullable=True))
        batch_op.add_column(sa.Column("former", sa.JSON(none_as_null=True), nullable=True))
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("note", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.drop_column("note")
    with op.batch_alter_table("provider_thread_revisions", schema=None) as batch_op:
        batch_op.drop_column("former")
        batch_op.drop_column("turns")
        batch_op.drop_column("stamp")
