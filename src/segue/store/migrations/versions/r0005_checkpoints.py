"""Checkpoints and rollbacks.

A checkpoint is a snapshot of an app thread's workspace after a run (exact when the run's own
end was seen, approximate when a later look found the run done, or a safety snapshot taken
before a rollback), as a git commit under segue's refs, with the files it changed against the
snapshot before it and those it left out. A rollback takes a thread back to a run: the
safety snapshot it took first, the checkpoint it restored, the runs and provider threads it
changed (with what they were, so that it can be undone) and the handoffs it superseded; an undo
is a rollback row naming the one it undoes. A fork's lineage names the checkpoint its
workspace was made from, and a handoff the workspace's latest checkpoint when it was made.

Revision 0005, after 0004.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from segue.store.migrations.shapes import create_table

revision = "0005"
down_revision = "0004"


def upgrade() -> None:
    create_table(
        "checkpoints",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("thread_id", sa.Text(), nullable=False),
        sa.Column("run_ordinal", sa.Integer(), nullable=False),
        sa.Column("kind", sa.Text(), nullable=False),
        sa.Column("provider", sa.Text(), nullable=True),
        sa.Column("folder", sa.Text(), nullable=False),
        sa.Column("repository", sa.Text(), nullable=False),
        sa.Column("private", sa.Boolean(), nullable=False),
        sa.Column("ref", sa.Text(), nullable=False),
        sa.Column("commit_id", sa.Text(), nullable=False),
        sa.Column("tree_id", sa.Text(), nullable=False),
        sa.Column("base", sa.Text(), nullable=False),
        sa.Column("files", sa.JSON(none_as_null=True), nullable=True),
        sa.Column("skipped", sa.JSON(none_as_null=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        refers={"thread_id": "app_threads"},
        indexes=[["thread_id"]],
    )
    op.add_column("app_threads", sa.Column("parent_checkpoint_id", sa.Text(), nullable=True))
    op.add_column("context_handoffs", sa.Column("checkpoint_id", sa.Text(), nullable=True))
    create_table(
        "rollbacks",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("thread_id", sa.Text(), nullable=False),
        sa.Column("to_run", sa.Integer(), nullable=False),
        sa.Column("scope", sa.Text(), nullable=False),
        sa.Column("safety_checkpoint_id", sa.Text(), nullable=True),
        sa.Column("target_checkpoint_id", sa.Text(), nullable=True),
        sa.Column("runs", sa.JSON(none_as_null=True), nullable=True),
        sa.Column("provider_threads", sa.JSON(none_as_null=True), nullable=True),
        sa.Column("handoffs", sa.JSON(none_as_null=True), nullable=True),
        sa.Column("undoes", sa.Text(), nullable=True),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        refers={
            "thread_id": "app_threads",
            "safety_checkpoint_id": "checkpoints",
            "target_checkpoint_id": "checkpoints",
            "undoes": "rollbacks",
        },
        unique="undoes",
        indexes=[["thread_id"]],
    )


def downgrade() -> None:
    with op.batch_alter_table("context_handoffs", schema=None) as batch_op:
        batch_op.drop_column("checkpoint_id")
    with op.batch_alter_table("app_threads", schema=None) as batch_op:
        batch_op.drop_column("parent_checkpoint_id")
    op.drop_table("rollbacks")  # (their indexes go with them)
    op.drop_table("checkpoints")
