"""`resolve_project`: a directory belongs to the recorded project it physically IS; a parent folder's
memory only by opt-in, and never that of `/` or the home folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.scope import explain_project, resolve_project


@pytest.fixture
def folders(tmp_path: Path) -> dict[str, Path]:
    base = tmp_path.resolve()
    alpha = base / "alpha"
    beta = base / "beta-project-with-a-longer-path"  # longer than alpha, as the old bug needed
    (alpha / "src" / "deep").mkdir(parents=True)
    beta.mkdir()
    (beta / "link-to-alpha").symlink_to(alpha, target_is_directory=True)
    return {"alpha": alpha, "beta": beta}


def test_a_path_through_another_project_resolves_to_the_project_it_reaches(
    folders: dict[str, Path],
) -> None:
    alpha, beta = str(folders["alpha"]), str(folders["beta"])
    recorded = [alpha, beta]
    assert resolve_project(recorded, Path(f"{beta}/../alpha")) == alpha
    assert resolve_project(recorded, f"{beta}/link-to-alpha") == alpha
    # also when the person opted in to parent inheritance: B is not a parent of either path
    assert resolve_project(recorded, Path(f"{beta}/../alpha"), inherit_parent=True) == alpha
    assert (
        resolve_project(recorded, Path(f"{beta}/link-to-alpha/src"), inherit_parent=True) == alpha
    )
    # positive control: B itself is B
    assert resolve_project(recorded, Path(beta)) == beta


def test_a_project_recorded_through_a_symlink_is_compared_by_its_real_path(
    folders: dict[str, Path],
) -> None:
    alpha, link = str(folders["alpha"]), str(folders["beta"] / "link-to-alpha")
    assert resolve_project([link], Path(alpha)) == link
    # the name spelled as the folder itself wins when both were recorded
    assert resolve_project([link, alpha], Path(link)) == alpha


def test_paths_match_whole_components() -> None:
    recorded = ["/home/dev/alpha"]
    assert resolve_project(recorded, Path("/home/dev/alpha2")) is None
    assert resolve_project(recorded, Path("/home/dev/alpha2/x"), inherit_parent=True) is None
    assert resolve_project(recorded, Path("/home/dev/alpha")) == "/home/dev/alpha"
    assert resolve_project(recorded, Path("/home/dev/alpha/x"), inherit_parent=True) == (
        "/home/dev/alpha"
    )


def test_a_sub_folder_inherits_its_parents_memory_only_when_opted_in(
    folders: dict[str, Path],
) -> None:
    alpha = str(folders["alpha"])
    deep = folders["alpha"] / "src" / "deep"
    off = explain_project([alpha], deep)
    assert (off.project, off.parent, off.directory) == (None, alpha, str(deep))
    assert "parent-folder inheritance is off" in off.reason
    on = explain_project([alpha], deep, inherit_parent=True)
    assert (on.project, on.parent) == (alpha, None)
    assert on.reason == f"inherited from the nearest recorded folder above it, {alpha}"


def test_the_nearest_recorded_parent_is_inherited() -> None:
    recorded = ["/w/app", "/w/app/sub", "/w/apple"]
    assert resolve_project(recorded, Path("/w/app/sub/deep"), inherit_parent=True) == "/w/app/sub"
    assert resolve_project(recorded, Path("/w/app/other"), inherit_parent=True) == "/w/app"
    assert resolve_project(recorded, Path("/w/apple")) == "/w/apple"
    assert resolve_project(recorded, Path("/w/ap"), inherit_parent=True) is None


def test_root_and_home_are_never_inherited(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path.resolve() / "home" / "dev"
    (home / "new-project").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    recorded = ["/", str(home), "/w/app"]
    for directory in (home / "new-project", Path("/srv/anything")):
        found = explain_project(recorded, directory, inherit_parent=True)
        assert found.project is None
        assert "never inherited" in found.reason
    # an explicit home folder works the same as $HOME
    assert (
        resolve_project([str(home)], home / "new-project", inherit_parent=True, home=home) is None
    )
    # positive controls: a session in / or ~ still applies there, and other parents are inherited
    assert resolve_project(recorded, Path("/")) == "/"
    assert resolve_project(recorded, home) == str(home)
    assert resolve_project(recorded, Path("/w/app/sub"), inherit_parent=True) == "/w/app"
