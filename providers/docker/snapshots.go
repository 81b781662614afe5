package docker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/moby/moby/api/types/image"
	"github.com/moby/moby/client"

	"github.com/boxsnap/boxsnap/providers"
)

// DeleteSnapshot removes the snapshot's image tag and its volume copy, and
// nothing else: layers another image or a container still uses stay, as the
// engine keeps them. A snapshot already gone is deleted.
func (s *stored) DeleteSnapshot(ctx context.Context, ref providers.SnapshotRef, _ providers.Recorder) error {
	return s.deleteParts(ctx, ref.Ref)
}

func (s *stored) deleteParts(ctx context.Context, snap string) error {
	if snap == "" {
		return errors.New("a snapshot reference is required")
	}
	cctx, cancel := short(ctx)
	defer cancel()
	copiers, err := s.copiersOf(cctx, snap)
	if err != nil {
		return err
	}
	for _, id := range copiers {
		s.forceRemove(ctx, id)
	}
	s.state().UnmarkTake(snap)
	imgs, err := s.imagesOf(cctx, snap)
	if err != nil {
		return err
	}
	for _, im := range imgs {
		// Force untags an image a box's container was made from (a restored
		// box or a fork runs on it); the engine keeps the image while it is
		// used. A commit a killed take never tagged goes where nothing uses
		// it.
		tags := realTags(im.RepoTags)
		for _, tag := range tags {
			if _, err := s.c.ImageRemove(cctx, tag, client.ImageRemoveOptions{Force: true}); err != nil {
				if w := wrap(err, "remove the snapshot's image"); !errors.Is(w, providers.ErrNotFound) {
					return w
				}
			}
		}
		if len(tags) == 0 {
			_, _ = s.c.ImageRemove(cctx, im.ID, client.ImageRemoveOptions{})
		}
	}
	return s.removeVolume(ctx, snapVolume(snap))
}

// copiersOf lists the copier containers a take of the snapshot made, and
// its look containers (one a killed process left would otherwise hold its
// volume copy past its delete). A box made from the snapshot's image
// carries its labels too, so the role is checked.
func (s *stored) copiersOf(ctx context.Context, snap string) ([]string, error) {
	f := client.Filters{}.Add("label", labelInstall+"="+s.cfg.Install, labelSnapshot+"="+snap)
	list, err := s.c.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return nil, wrap(err, "list the snapshot's copiers")
	}
	var out []string
	for _, c := range list.Items {
		if r := c.Labels[labelRole]; r == roleCopier || r == roleLook {
			out = append(out, c.ID)
		}
	}
	return out, nil
}

// imagesOf lists the images labelled with the snapshot's ID (its commit,
// tagged or not).
func (s *stored) imagesOf(ctx context.Context, snap string) ([]image.Summary, error) {
	f := client.Filters{}.Add("label", labelInstall+"="+s.cfg.Install, labelSnapshot+"="+snap)
	imgs, err := s.c.ImageList(ctx, client.ImageListOptions{Filters: f})
	if err != nil {
		return nil, wrap(err, "list the snapshot's images")
	}
	return imgs.Items, nil
}

// realTags drops the "<none>:<none>" older engines list for an untagged
// image.
func realTags(tags []string) []string {
	var out []string
	for _, t := range tags {
		if t != "<none>:<none>" && t != "" {
			out = append(out, t)
		}
	}
	return out
}

// keptTag is the tag that writes a keep date on a snapshot: image labels
// cannot change after the commit, tags can.
func keptTag(snap string, until time.Time) string {
	return keptRepo + ":" + snap + "-" + until.UTC().Format("20060102")
}

// keptFrom reads a keep date from an image's tags: the end of that UTC day.
func keptFrom(snap string, tags []string) *time.Time {
	for _, tag := range tags {
		if day, ok := strings.CutPrefix(tag, keptRepo+":"+snap+"-"); ok {
			if d, err := time.Parse("20060102", day); err == nil {
				end := d.Add(24*time.Hour - time.Second)
				return &end
			}
		}
	}
	return nil
}

// SetKeptUntil writes the keep date (nil: not kept) as a tag on the
// snapshot's image.
func (s *stored) SetKeptUntil(ctx context.Context, ref providers.SnapshotRef, keptUntil *time.Time) error {
	cctx, cancel := short(ctx)
	defer cancel()
	imgs, err := s.imagesOf(cctx, ref.Ref)
	if err != nil {
		return err
	}
	var id string
	for _, im := range imgs {
		if !slices.Contains(im.RepoTags, snapImage(ref.Ref)) {
			continue
		}
		id = im.ID
		for _, tag := range realTags(im.RepoTags) {
			if strings.HasPrefix(tag, keptRepo+":") && (keptUntil == nil || tag != keptTag(ref.Ref, *keptUntil)) {
				if _, err := s.c.ImageRemove(cctx, tag, client.ImageRemoveOptions{}); err != nil {
					return wrap(err, "remove the keep date")
				}
			}
		}
	}
	if id == "" {
		return fmt.Errorf("the snapshot %s's image: %w", ref.Ref, providers.ErrNotFound)
	}
	if keptUntil == nil {
		return nil
	}
	_, err = s.c.ImageTag(cctx, client.ImageTagOptions{Source: id, Target: keptTag(ref.Ref, *keptUntil)})
	return wrap(err, "write the keep date")
}

// HeldSnapshots lists this install's snapshots from the labels of their
// images and volume copies; a snapshot with one of the two is incomplete.
func (s *stored) HeldSnapshots(ctx context.Context) ([]providers.HeldSnapshot, error) {
	cctx, cancel := short(ctx)
	defer cancel()
	f := client.Filters{}.Add("label", labelInstall+"="+s.cfg.Install, labelRole+"="+roleSnapshot)
	imgs, err := s.c.ImageList(cctx, client.ImageListOptions{Filters: f})
	if err != nil {
		return nil, wrap(err, "list the snapshots' images")
	}
	vols, err := s.c.VolumeList(cctx, client.VolumeListOptions{Filters: f})
	if err != nil {
		return nil, wrap(err, "list the snapshots' volumes")
	}
	type parts struct {
		labels     map[string]string
		image, vol bool
		size       int64
		kept       *time.Time
	}
	found := map[string]*parts{}
	var order []string
	get := func(labels map[string]string) *parts {
		id := labels[labelSnapshot]
		p := found[id]
		if p == nil {
			p = &parts{labels: labels}
			found[id] = p
			order = append(order, id)
		}
		return p
	}
	for _, im := range imgs.Items {
		id := im.Labels[labelSnapshot]
		// An untagged image is a deleted snapshot's, kept by the engine for
		// a container made from it.
		if id == "" || !slices.Contains(im.RepoTags, snapImage(id)) {
			continue
		}
		p := get(im.Labels)
		p.image, p.size = true, im.Size
		p.labels = im.Labels
		p.kept = keptFrom(id, im.RepoTags)
	}
	for _, v := range vols.Items {
		id := v.Labels[labelSnapshot]
		if id == "" || v.Name != snapVolume(id) {
			continue
		}
		get(v.Labels).vol = true
	}
	out := make([]providers.HeldSnapshot, 0, len(order))
	for _, id := range order {
		p := found[id]
		l := p.labels
		h := providers.HeldSnapshot{
			Ref: providers.SnapshotRef{ID: id, Ref: id, Storage: "docker", Where: "current",
				Guest: providers.Guest{Backend: s.cfg.ID, Kind: KindLinux, Host: s.host(), Ref: boxName(l[labelBox])}},
			Label: providers.Label{Install: l[labelInstall], Box: l[labelBox], Snapshot: id},
			Host:  s.host(), Storage: "docker", Holds: providers.HoldsDisk,
		}
		h.Label.ResetVersion, _ = strconv.Atoi(l[labelReset])
		if t, err := time.Parse(time.RFC3339Nano, l[labelTakenAt]); err == nil {
			h.TakenAt = t
		}
		h.Label.KeptUntil = p.kept
		if p.size > 0 {
			h.Size = &providers.Size{Bytes: p.size, Meaning: "whole"}
		}
		switch {
		case !p.image:
			// While the box is paused, or the take's copier or its mark
			// (hoststate's marks) is there, a take is at work on it (or was cut short there, and its resume
			// takes it again): not yet a snapshot, nor an orphan.
			if c, ok, err := s.inspect(ctx, boxName(l[labelBox])); err == nil && ok && c.State != nil && c.State.Paused {
				continue
			}
			if cps, err := s.copiersOf(ctx, id); err != nil || len(cps) > 0 || s.state().TakeMarked(id) {
				continue
			}
			h.Incomplete, h.Error = true, "its volume's copy exists but its image was never committed: the take was cut short"
		case !p.vol && l[labelVolumeIn] == "":
			h.Incomplete, h.Error = true, "its image exists but its volume's copy is gone"
		}
		out = append(out, h)
	}
	return out, nil
}
