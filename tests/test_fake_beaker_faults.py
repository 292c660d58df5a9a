"""Reliability faults on the fake Beaker: a reply cut mid-body on create, two accounts under
either experiment-name scope, and an outage; driven by unmodified beaker-py."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from beaker import Beaker, BeakerExperimentSpec
from beaker import beaker_pb2 as pb2
from beaker.exceptions import BeakerExperimentConflict, BeakerWorkloadNotFound

from tests.fake_beaker import FakeBeaker
from tests.fake_beaker.fixtures import new_client


@pytest.fixture
def alice_and_bob(fake_beaker: FakeBeaker) -> Iterator[tuple[Beaker, Beaker]]:
    alice, bob = fake_beaker.add_user("alice"), fake_beaker.add_user("bob")
    with new_client(user_token=alice) as a, new_client(user_token=bob) as b:
        yield a, b


def create(client: Beaker, workspace: pb2.Workspace, name: str, description: str = "") -> Any:
    spec = BeakerExperimentSpec.new(
        docker_image="python:3.11", command=["true"], description=description or name
    )
    return client.experiment.create(name=name, spec=spec, workspace=workspace)


# A reply cut mid-body.


def test_cut_reply_raises_chunked_encoding_error_but_the_experiment_exists(
    fake_beaker: FakeBeaker, beaker: Beaker, workspace: pb2.Workspace
) -> None:
    fake_beaker.cut_reply_after_commit()
    with pytest.raises(requests.exceptions.ChunkedEncodingError, match="IncompleteRead"):
        create(beaker, workspace, "half")
    assert fake_beaker.count_by_name() == {"half": 1}
    assert fake_beaker.calls["http:create"] == 1  # beaker-py did not retry the POST
    assert beaker.workload.get("fake-user/half").experiment.name == "half"
    create(beaker, workspace, "whole")  # count-exact: the next create is answered in full


# Two accounts, and where a name is unique.


def test_each_token_is_its_own_author(
    fake_beaker: FakeBeaker, alice_and_bob: tuple[Beaker, Beaker], workspace: pb2.Workspace
) -> None:
    alice, bob = alice_and_bob
    assert (alice.user_name, bob.user_name) == ("alice", "bob")
    create(alice, workspace, "from-alice")
    assert fake_beaker.experiment("from-alice").author == "alice"
    assert alice.workload.get("alice/from-alice").experiment.name == "from-alice"
    with pytest.raises(BeakerWorkloadNotFound):
        bob.workload.get("bob/from-alice")
    with pytest.raises(ValueError, match="taken"):
        fake_beaker.add_user("carol", token=fake_beaker.token)


def test_workspace_scope_a_name_taken_by_another_user_conflicts(
    fake_beaker: FakeBeaker, alice_and_bob: tuple[Beaker, Beaker], workspace: pb2.Workspace
) -> None:
    alice, bob = alice_and_bob
    assert fake_beaker.name_scope == "workspace"
    create(alice, workspace, "foo")
    with pytest.raises(BeakerExperimentConflict):
        create(bob, workspace, "foo")
    assert [e.author for e in fake_beaker.experiments()] == ["alice"]


def test_author_scope_two_users_each_create_the_same_name(
    fake_beaker: FakeBeaker, alice_and_bob: tuple[Beaker, Beaker], workspace: pb2.Workspace
) -> None:
    alice, bob = alice_and_bob
    fake_beaker.name_scope = "author"
    mine = create(alice, workspace, "foo", "alice's foo").experiment.id
    theirs = create(bob, workspace, "foo", "bob's foo").experiment.id
    assert mine != theirs
    with pytest.raises(BeakerExperimentConflict):
        create(alice, workspace, "foo")  # still unique per author
    assert bob.workload.get("alice/foo").experiment.id == mine
    assert alice.workload.get("bob/foo").experiment.id == theirs
    listed = alice.workload.list(workspace=workspace, name_or_description="foo")
    assert sorted(w.experiment.description for w in listed) == ["alice's foo", "bob's foo"]
    bob_id = bob.user.get().id
    by_bob = alice.workload.list(workspace=workspace, author=bob.user.get())
    assert [w.experiment.author_id for w in by_bob] == [bob_id]
    with pytest.raises(ValueError, match="2 experiments are called 'foo'"):
        fake_beaker.experiment("foo")
    assert fake_beaker.experiment("bob/foo").id == theirs


# Unreachable, then back.


def test_outage_refuses_connections_then_comes_back(
    fake_beaker: FakeBeaker, beaker: Beaker, workspace: pb2.Workspace
) -> None:
    exp_id = create(beaker, workspace, "survivor").experiment.id
    with fake_beaker.outage():
        assert not fake_beaker.running
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", fake_beaker.grpc_port), timeout=1).close()
    assert beaker.workload.get(exp_id).experiment.name == "survivor"
