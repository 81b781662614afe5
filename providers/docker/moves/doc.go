// Package moves is the Docker backend's exports, imports and share
// copies: Moves writes a snapshot as an archive of its image's config and
// layers, read from the engine's save (ExportSnapshot; against a base only
// the layers above the bottom the two images share, and a volume copy as
// one more layer), checks a batch of archives whole (each layer's diff ID
// and what its tar holds, and that the layers an archive leaves out are
// its base's) before it loads any on the engine, untagged, and tags them
// last (ImportSnapshots), and makes the copy of a snapshot that is shared:
// a top layer of whiteouts for the secrets and chosen targets, what is
// left scanned for the secrets' shapes (Scrub). It answers
// providers.Exporter; the docker Backend embeds it.
//
// It reaches the engine through the moby client and the backend's images,
// look containers and loads through Engine. It imports only the standard
// library, the moby client and its types, containerd's errdefs and
// providers; it must never import app/..., jobs, package docker or another
// backend.
package moves
