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

revision = "0005"
down_revision: str | None = "0004"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
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
        sa.ForeignKeyConstraint(
            ["thread_id"], ["app_threads.id"], name=op.f("fk_checkpoints_thread_id_app_threads")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_checkpoints")),
    )
    with op.batch_alter_table("checkpoints", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_checkpoints_thread_id"), ["thread_id"], unique=False)

    with op.batch_alter_table("app_threads", schema=None) as batch_op:
        batch_op.add_column(sa.Column("parent_checkpoint_id", sa.Text(), nullable=True))
    with op.batch_alter_table("context_handoffs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("checkpoint_id", sa.Text(), nullable=True))
    op.create_table(
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
        sa.ForeignKeyConstraint(
            ["thread_id"], ["app_threads.id"], name=op.f("fk_rollbacks_thread_id_app_threads")
        ),
        sa.ForeignKeyConstraint(
            ["safety_checkpoint_id"],
            ["checkpoints.id"],
            name=op.f("fk_rollbacks_safety_checkpoint_id_checkpoints"),
        ),
        sa.ForeignKeyConstraint(
            ["target_checkpoint_id"],
            ["checkpoints.id"],
            name=op.f("fk_rollbacks_target_checkpoint_id_checkpoints"),
        ),
        sa.ForeignKeyConstraint(
            ["undoes"], ["rollbacks.id"], name=op.f("fk_rollbacks_undoes_rollbacks")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_rollbacks")),
        sa.UniqueConstraint("undoes", name=op.f("uq_rollbacks_undoes")),
    )
    with op.batch_alter_table("rollbacks", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_rollbacks_thread_id"), ["thread_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("context_handoffs", schema=None) as batch_op:
        batch_op.drop_column("checkpoint_id")
    with op.batch_alter_table("app_threads", schema=None) as batch_op:
        batch_op.drop_column("parent_checkpoint_id")
    with op.batch_alter_table("rollbacks", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_rollbacks_thread_id"))
    op.drop_table("rollbacks")
    with op.batch_alter_table("checkpoints", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_checkpoints_thread_id"))
    op.drop_table("checkpoints")
