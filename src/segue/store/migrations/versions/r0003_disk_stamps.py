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
down_revision = "0002"


def upgrade() -> None:
    for name in ("stamp", "turns", "former"):
        op.add_column(
            "provider_thread_revisions", sa.Column(name, sa.JSON(none_as_null=True), nullable=True)
        )
    op.add_column("runs", sa.Column("note", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.drop_column("note")
    with op.batch_alter_table("provider_thread_revisions", schema=None) as batch_op:
        for name in ("former", "turns", "stamp"):
            batch_op.drop_column(name)
