"""The evidence trail of a game at the table: the frame each resolution was measured from,
kept with it in the game file when it commits, and the frame a held car's pose came from.

A verdict is measured from one frame's own poses (not the tracker's averages), so it can
be measured again from that frame after the game. With several cameras it is measured
from one frame set (each believed camera's frame captured nearest the same instant, and
for each car only the frames the live fusion trusts: MultiLiveTable.fused_frame_set), a
car two see combined by inverse covariance (vision.multicam.combine_frames); every frame that
gave a judged car's pose is kept, naming its camera, and the audit combines them again.
"""

from __future__ import annotations

from .geometry import Pose


class FrameSet:
    """Several cameras' latest frames as one piece of evidence: `frames` [(camera name,
    image, located)] in camera order, `poses` the combined poses, `given` each car's frames
    (indices into `frames`) its pose is combined from."""

    def __init__(self, frames: list, poses: dict, given: dict) -> None:
        self.frames, self.poses, self.given = frames, poses, given


def _multi(live) -> bool:
    from .live import MultiLiveTable
    return isinstance(live, MultiLiveTable) and len(live.camera_names()) > 1


class EvidenceTrail:
    """Frames and poses for the record; writes to the game file (a GameStore) if there is one."""

    def __init__(self, live, store=None) -> None:
        self.live = live
        self.store = store
        self._pending: list[dict] = []         # this resolution's frames, stored when it commits
        self._pose_from: dict[str, str] = {}   # the judged cars no frame gave a pose: why

    def frame_poses(self):
        """The latest frame's own poses for the cars it saw, and the frame itself (or None)."""
        if _multi(self.live):
            return self._frame_set_poses()
        image, tracked = self.live.last_image()
        if tracked is None or tracked.located.table_pose is None:
            return {}, None
        located = tracked.located
        poses = {c.id: Pose(c.x_mm, c.y_mm, c.heading_deg, c.sigma_mm, c.sigma_deg) for c in located.cars}
        return poses, (image, located)

    def _frame_set_poses(self):
        """Several cameras: the frame set's own poses combined, and the FrameSet."""
        from vision.multicam import combine_frames
        views, trusted = self.live.fused_frame_set()
        if not views:
            return {}, None
        frames = [(name, image, tracked.located) for name, image, tracked in views]
        combined, given = combine_frames([{c.id: c for c in located.cars} for _, _, located in frames], trusted)
        poses = {m: Pose(*p) for m, p in combined.items()}
        return poses, FrameSet(frames, poses, given)

    def measuring_from(self, frame, cars) -> None:
        """The resolution about to be made is measured from this frame, for these cars
        (marker to the Pose it is judged at). Only a car judged at the frame's own pose is
        recorded as measured from it: a car judged from where its move began (the frame
        shows it after the move) is recorded so (`pose_from`), and measured again from
        nothing but the record's numbers, never from this frame."""
        self._pose_from = {}
        if frame is None:
            self._pending = []
            return
        if isinstance(frame, FrameSet):
            seen = {m: (p.x_mm, p.y_mm, p.heading_deg) for m, p in frame.poses.items()}
        else:
            seen = {c.id: (c.x_mm, c.y_mm, c.heading_deg) for c in frame[1].cars}
        judged = cars if isinstance(cars, dict) else {m: None for m in cars}
        mine = [m for m, p in judged.items()
                if m in seen and (p is None or (p.x_mm, p.y_mm, p.heading_deg) == seen[m])]
        self._pose_from = {str(m): "stood" for m in judged if m not in mine}
        if not isinstance(frame, FrameSet):
            self._pending = [{"frame": frame, "cars": sorted(mine)}]
            return
        # Every camera's frame that gave a judged car's pose, each with the cars it gave.
        self._pending = []
        for k, (name, image, located) in enumerate(frame.frames):
            gave = sorted(m for m in mine if k in frame.given.get(m, ()))
            if gave:
                self._pending.append({"frame": (image, located), "cars": gave, "camera": name})

    def calibration(self) -> str | None:
        """The camera calibration's fingerprint, for the record."""
        from vision.evidence import camera_fingerprint
        if _multi(self.live):
            # Each camera's, named (each stored frame's table pose also keeps its own).
            poses = [(c.name, c.pipeline.locator.table_pose) for c in self.live.multi.cameras]
            return "; ".join(f"{name} {camera_fingerprint(p.camera) if p is not None else 'none'}"
                             for name, p in poses)
        pose = self.live.pipeline.locator.table_pose
        return camera_fingerprint(pose.camera) if pose is not None else None

    def _store_frame(self, frame) -> dict | None:
        if self.store is None or frame is None:
            return None
        from vision.evidence import frame_evidence
        jpeg, detections, pose = frame_evidence(*frame)
        return self.store.add_evidence(jpeg, detections, pose)

    def hold(self, marker: int, pose, frame) -> None:
        """A car held where its turn began: its pose, and the frame it came from."""
        if self.store is None or pose is None:
            return
        from .record import pose_json
        if isinstance(frame, FrameSet):
            # Several cameras: every frame its pose is combined from, naming its camera.
            ref = [{"ref": self._store_frame(frame.frames[k][1:]), "cars": [marker], "camera": frame.frames[k][0]}
                   for k in frame.given.get(marker, ())] or None
        else:
            ref = self._store_frame(frame) if frame is not None else None
        self.store.append("hold", {"vehicle": marker, "pose": pose_json(pose), "evidence": ref})

    def commit(self, event, rules, state) -> None:
        """A resolution or an undo is final: into the game file, with its frames."""
        if self.store is None:
            self._pending, self._pose_from = [], {}
            return
        from .record import event_body
        refs = []
        for item in self._pending:
            ref = self._store_frame(item["frame"])
            if ref is not None:
                refs.append({"ref": ref, "cars": item["cars"]}
                            | ({"camera": item["camera"]} if "camera" in item else {}))
        kind, body = event_body(event, rules, state, refs, self.calibration())
        if kind == "resolution" and refs:
            # Says that `evidence` lists only the cars its frame gave a pose (see measuring_from).
            body["pose_from"] = dict(self._pose_from)
        self.store.append(kind, body)
        self._pending, self._pose_from = [], {}
