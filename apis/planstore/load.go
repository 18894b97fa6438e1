package planstore

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// MaxUnpackedBytes bounds plan.json, plan.txt and plan.bin together once
// decompressed, for Load, and plan.json alone for LoadText.
const MaxUnpackedBytes = 2 << 30

// Stat reads what the Workspace's stored plan is, from chunk 0 alone. It
// does not verify the chunks; Load does.
func Stat(ctx context.Context, g Getter, workspace string) (Meta, error) {
	s, err := getChunk(ctx, g, workspace, 0)
	if err != nil {
		return Meta{}, err
	}
	return metaOf(s)
}

// Load reads, verifies and unpacks the Workspace's stored plan. It returns
// an error wrapping ErrNotFound when there is none, ErrCorrupt when the
// chunks are missing, mixed with another plan's, or do not match chunk 0's
// checksums, and ErrTooLarge when the plan unpacks to more than
// MaxUnpackedBytes. Chunks are read and decompressed as the archive is
// read, so only the unpacked files are held in memory. Plan.Text is nil
// for a bundle without plan.txt.
func Load(ctx context.Context, g Getter, workspace string) (*Plan, error) {
	cr, err := openChunks(ctx, g, workspace)
	if err != nil {
		return nil, err
	}
	p := &Plan{Meta: cr.meta}
	p.JSON, p.Text, p.Binary, err = unpack(cr, MaxUnpackedBytes)
	if err != nil {
		return nil, cr.wrap(err)
	}
	if err := cr.verify(); err != nil {
		return nil, err
	}
	p.Size = cr.read
	if err := p.checkJSON(); err != nil {
		return nil, err
	}
	return p, nil
}

// LoadJSON reads only plan.json of the Workspace's stored plan, for a
// reader that does not apply it (the policy gate). It reads chunks only as
// far as plan.json reaches, decompresses at most maxJSON bytes of it and
// refuses a larger one with ErrTooLarge before reading it, so a small plan
// Secret that unpacks to gigabytes costs the reader no more than maxJSON
// bytes. It verifies the plan digest (what the gate evaluates and the
// approver approves), not the checksum of the whole stream: plan.bin is not
// read. The returned Plan has no Binary, Text or Size.
func LoadJSON(ctx context.Context, g Getter, workspace string, maxJSON int64) (*Plan, error) {
	p, a, err := loadJSON(ctx, g, workspace, maxJSON)
	if a != nil {
		a.close()
	}
	return p, err
}

// loadJSON is LoadJSON, returning the archive open after plan.json (nil
// when it could not be opened) for the caller to close.
func loadJSON(ctx context.Context, g Getter, workspace string, maxJSON int64) (*Plan, *archive, error) {
	a, err := openArchive(ctx, g, workspace)
	if err != nil {
		return nil, nil, err
	}
	p := &Plan{Meta: a.meta}
	if p.JSON, err = readEntry(a.tr, a.first, maxJSON); err != nil {
		return nil, a, a.wrap(err)
	}
	if err := p.checkJSON(); err != nil {
		return nil, a, err
	}
	return p, a, nil
}

// LoadText reads only plan.txt of the Workspace's stored plan, for a
// reader that shows it to people (the CLI). Like LoadJSON it reads chunks
// only as far as it needs, decompresses at most maxText bytes of the text
// and refuses a larger one with ErrTooLarge before reading it. plan.json,
// which comes first, is hashed as it streams past (at most
// MaxUnpackedBytes, never held in memory) and checked against the plan
// digest, so the text is the one stored with the plan that ID and digest
// name. A bundle without plan.txt is ErrNoText. The returned Plan has only
// Meta and Text.
//
// The text is untrusted input: anything that can write the plan Secrets
// can write it. Pass a bound (MaxTextBytes, or less) and do not send it to
// a terminal without removing control characters.
func LoadText(ctx context.Context, g Getter, workspace string, maxText int64) (*Plan, error) {
	p, a, err := loadText(ctx, g, workspace, maxText)
	if a != nil {
		a.close()
	}
	return p, err
}

// loadText is LoadText, returning the archive open after plan.txt (nil
// when it could not be opened) for the caller to close.
func loadText(ctx context.Context, g Getter, workspace string, maxText int64) (*Plan, *archive, error) {
	a, err := openArchive(ctx, g, workspace)
	if err != nil {
		return nil, nil, err
	}
	sum := sha256.New()
	if _, err := copyEntry(sum, a.tr, a.first, MaxUnpackedBytes); err != nil {
		return nil, a, a.wrap(err)
	}
	if err := checkDigest("sha256:"+hex.EncodeToString(sum.Sum(nil)), a.meta.Digest); err != nil {
		return nil, a, err
	}
	hdr, err := a.tr.Next()
	switch {
	case errors.Is(err, io.EOF), err == nil && hdr.Name == magosv1.PlanBinaryFile:
		return nil, a, fmt.Errorf("%w: plan %s was stored without %s", ErrNoText, a.meta.ID, magosv1.PlanTextFile)
	case err != nil:
		return nil, a, a.wrap(err)
	case hdr.Typeflag != tar.TypeReg || hdr.Name != magosv1.PlanTextFile:
		return nil, a, fmt.Errorf("%w: unexpected entry %q after %s in the plan archive", ErrCorrupt, hdr.Name, magosv1.PlanJSONFile)
	}
	p := &Plan{Meta: a.meta}
	if p.Text, err = readEntry(a.tr, hdr, maxText); err != nil {
		return nil, a, a.wrap(err)
	}
	return p, a, nil
}

// archive is a stored plan opened for reading its first entries, with the
// header of plan.json (always the first) read.
type archive struct {
	*chunkReader
	gz    *gzip.Reader
	tr    *tar.Reader
	first *tar.Header
}

// openArchive reads chunk 0 and opens the archive at plan.json.
func openArchive(ctx context.Context, g Getter, workspace string) (*archive, error) {
	cr, err := openChunks(ctx, g, workspace)
	if err != nil {
		return nil, err
	}
	gz, err := openGzip(cr)
	if err != nil {
		return nil, cr.wrap(err)
	}
	a := &archive{chunkReader: cr, gz: gz, tr: tar.NewReader(gz)}
	if a.first, err = a.tr.Next(); err != nil {
		a.close()
		return nil, cr.wrap(err)
	}
	if a.first.Typeflag != tar.TypeReg || a.first.Name != magosv1.PlanJSONFile {
		a.close()
		return nil, fmt.Errorf("%w: the plan archive starts with %q, not %s", ErrCorrupt, a.first.Name, magosv1.PlanJSONFile)
	}
	return a, nil
}

// close closes the archive and gives its decompressor back (gzipReaders).
func (a *archive) close() {
	_ = a.gz.Close()
	gzipReaders.Put(a.gz)
}

// gzipReaders are decompressors to reuse: each holds a 32 KiB window, which
// every plan a controller reads (each run's, each gate's) would allocate
// anew.
var gzipReaders sync.Pool

// openGzip is a decompressor of r, reused when one is free.
func openGzip(r io.Reader) (*gzip.Reader, error) {
	gz, ok := gzipReaders.Get().(*gzip.Reader)
	if !ok {
		return gzip.NewReader(r)
	}
	if err := gz.Reset(r); err != nil {
		gzipReaders.Put(gz)
		return nil, err
	}
	return gz, nil
}

// checkJSON checks plan.json against the plan digest chunk 0 names.
func (p *Plan) checkJSON() error { return checkDigest(Digest(p.JSON), p.Digest) }

// checkDigest compares plan.json's digest, got, with chunk 0's, want.
func checkDigest(got, want string) error {
	if got != want {
		return fmt.Errorf("%w: plan.json has digest %s, chunk 0 says %s", ErrCorrupt, got, want)
	}
	return nil
}

// chunkReader reads the joined chunks of one stored plan, getting each
// Secret only when the reader reaches it and checking that it belongs to
// the plan chunk 0 describes and is no bigger than a chunk may be.
type chunkReader struct {
	ctx       context.Context
	g         Getter
	workspace string
	meta      Meta
	next      int    // index of the next chunk to get
	buf       []byte // unread bytes of the current chunk
	sum       hash.Hash
	read      int64
}

// openChunks reads chunk 0 and returns a reader positioned at its start.
func openChunks(ctx context.Context, g Getter, workspace string) (*chunkReader, error) {
	first, err := getChunk(ctx, g, workspace, 0)
	if err != nil {
		return nil, err
	}
	meta, err := metaOf(first)
	if err != nil {
		return nil, err
	}
	cr := &chunkReader{ctx: ctx, g: g, workspace: workspace, meta: meta, sum: sha256.New()}
	if err := cr.take(first, 0); err != nil {
		return nil, err
	}
	return cr, nil
}

// take makes chunk i of s the current one.
func (c *chunkReader) take(s *corev1.Secret, i int) error {
	if s.Type != magosv1.PlanSecretType || s.Annotations[magosv1.PlanIDAnnotation] != c.meta.ID {
		return fmt.Errorf("%w: chunk %d does not belong to plan %s", ErrCorrupt, i, c.meta.ID)
	}
	chunk := s.Data[magosv1.PlanChunkKey]
	if len(chunk) > magosv1.PlanChunkBytes {
		return fmt.Errorf("%w: chunk %d holds %d bytes, more than a chunk's %d", ErrCorrupt, i, len(chunk), magosv1.PlanChunkBytes)
	}
	c.buf, c.next = chunk, i+1
	c.sum.Write(chunk)
	c.read += int64(len(chunk))
	return nil
}

func (c *chunkReader) Read(p []byte) (int, error) {
	for len(c.buf) == 0 {
		if c.next >= c.meta.Chunks {
			return 0, io.EOF
		}
		s, err := getChunk(c.ctx, c.g, c.workspace, c.next)
		if errors.Is(err, ErrNotFound) {
			return 0, fmt.Errorf("%w: chunk %d of %d is missing", ErrCorrupt, c.next, c.meta.Chunks)
		}
		if err != nil {
			return 0, err
		}
		if err := c.take(s, c.next); err != nil {
			return 0, err
		}
	}
	n := copy(p, c.buf)
	c.buf = c.buf[n:]
	return n, nil
}

// verify reads what is left of the chunks and checks the whole stream
// against chunk 0's sha256.
func (c *chunkReader) verify() error {
	if _, err := io.Copy(io.Discard, c); err != nil {
		return c.wrap(err)
	}
	if got := "sha256:" + hex.EncodeToString(c.sum.Sum(nil)); !sameSHA256(got, c.meta.SHA256) {
		return fmt.Errorf("%w: the chunks have %s, chunk 0 says %s", ErrCorrupt, got, c.meta.SHA256)
	}
	return nil
}

// wrap marks an error met while reading the archive: size and integrity
// errors are kept as they are, anything from the Kubernetes API too, the
// rest (a broken gzip or tar stream) is ErrCorrupt.
func (c *chunkReader) wrap(err error) error {
	if errors.Is(err, ErrCorrupt) || errors.Is(err, ErrTooLarge) || errors.Is(err, ErrNotFound) || apierrors.ReasonForError(err) != metav1.StatusReasonUnknown {
		return err
	}
	return fmt.Errorf("%w: %w", ErrCorrupt, err)
}

// getChunk reads chunk i; a missing Secret is ErrNotFound.
func getChunk(ctx context.Context, g Getter, workspace string, i int) (*corev1.Secret, error) {
	name := magosv1.PlanSecretName(workspace, i)
	s, err := g.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("%w: Secret %s not found", ErrNotFound, name)
	}
	if err != nil {
		return nil, fmt.Errorf("reading plan Secret %s: %w", name, err)
	}
	return s, nil
}

// metaOf reads chunk 0's annotations. A chunk reserved by the controller
// and never written holds no plan.
func metaOf(s *corev1.Secret) (Meta, error) {
	a := s.Annotations
	if len(s.Data) == 0 && a[magosv1.PlanIDAnnotation] == "" && s.Type == magosv1.PlanSecretType {
		return Meta{}, fmt.Errorf("%w: Secret %s is reserved but holds no plan yet", ErrNotFound, s.Name)
	}
	m := Meta{
		ID:     a[magosv1.PlanIDAnnotation],
		Digest: a[magosv1.PlanDigestAnnotation],
		SHA256: a[magosv1.PlanSHA256Annotation],
	}
	n, err := strconv.Atoi(a[magosv1.PlanChunksAnnotation])
	switch {
	case s.Type != magosv1.PlanSecretType:
		return Meta{}, fmt.Errorf("%w: Secret %s has type %q, not %q", ErrCorrupt, s.Name, s.Type, magosv1.PlanSecretType)
	case err != nil || n < 1 || n > magosv1.MaxPlanChunks:
		return Meta{}, fmt.Errorf("%w: Secret %s has no valid %s annotation", ErrCorrupt, s.Name, magosv1.PlanChunksAnnotation)
	case m.ID == "" || m.Digest == "" || m.SHA256 == "":
		return Meta{}, fmt.Errorf("%w: Secret %s lacks the plan ID, digest or sha256 annotation", ErrCorrupt, s.Name)
	}
	m.Chunks = n
	return m, nil
}

// sameSHA256 compares digests written with or without the "sha256:" prefix.
func sameSHA256(a, b string) bool {
	return strings.TrimPrefix(a, "sha256:") == strings.TrimPrefix(b, "sha256:")
}

// unpack reads plan.json, plan.bin and the optional plan.txt from
// gzip(tar), at most limit bytes of them together, and refuses anything
// else.
func unpack(r io.Reader, limit int64) (planJSON, planText, planBin []byte, err error) {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return nil, nil, nil, err
	}
	defer gz.Close()
	tr := tar.NewReader(gz)
	files := map[string][]byte{}
	left := limit
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, nil, err
		}
		if hdr.Typeflag != tar.TypeReg || !bundleFile(hdr.Name) {
			return nil, nil, nil, fmt.Errorf("unexpected entry %q in the plan archive", hdr.Name)
		}
		if _, dup := files[hdr.Name]; dup {
			return nil, nil, nil, fmt.Errorf("duplicate entry %q in the plan archive", hdr.Name)
		}
		data, err := readEntry(tr, hdr, left)
		if err != nil {
			return nil, nil, nil, err
		}
		left -= int64(len(data))
		files[hdr.Name] = data
	}
	var ok1, ok2 bool
	planJSON, ok1 = files[magosv1.PlanJSONFile]
	planBin, ok2 = files[magosv1.PlanBinaryFile]
	if !ok1 || !ok2 {
		return nil, nil, nil, errors.New("the plan archive lacks plan.json or plan.bin")
	}
	return planJSON, files[magosv1.PlanTextFile], planBin, nil
}

// bundleFile says whether name is a file a plan bundle may hold.
func bundleFile(name string) bool {
	return name == magosv1.PlanJSONFile || name == magosv1.PlanBinaryFile || name == magosv1.PlanTextFile
}

// readEntry reads the current tar entry, refusing with ErrTooLarge one that
// says or turns out to be bigger than limit before buffering more than
// limit bytes of it.
func readEntry(tr *tar.Reader, hdr *tar.Header, limit int64) ([]byte, error) {
	buf := bytes.NewBuffer(make([]byte, 0, min(max(hdr.Size, 0), limit, 64<<20)))
	if _, err := copyEntry(buf, tr, hdr, limit); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// copyEntry copies the current tar entry to dst, refusing with ErrTooLarge
// one that says or turns out to be bigger than limit before copying more
// than limit bytes of it.
func copyEntry(dst io.Writer, tr *tar.Reader, hdr *tar.Header, limit int64) (int64, error) {
	if hdr.Size < 0 {
		return 0, fmt.Errorf("entry %q has a negative size", hdr.Name)
	}
	if hdr.Size > limit {
		return 0, fmt.Errorf("%w: %s unpacks to %d bytes, more than the limit of %d", ErrTooLarge, hdr.Name, hdr.Size, limit)
	}
	n, err := io.Copy(dst, io.LimitReader(tr, limit+1))
	if err != nil {
		return n, err
	}
	if n > limit {
		return n, fmt.Errorf("%w: %s unpacks to more than the limit of %d bytes", ErrTooLarge, hdr.Name, limit)
	}
	return n, nil
}

// Inspect reads the Workspace's stored plan once, as the
// workspace-controller does when a plan run ends: plan.json streams
// through read (at most MaxUnpackedBytes of it, never held whole here) and
// is checked against the plan digest, and every chunk is read and checked
// against chunk 0's sha256 without the rest being unpacked. It returns the
// stored plan's Meta, with SHA256 as read and Size; read's error, if any,
// comes after the integrity errors.
func Inspect(ctx context.Context, g Getter, workspace string, read func(planJSON io.Reader) error) (Meta, error) {
	a, err := openArchive(ctx, g, workspace)
	if err != nil {
		return Meta{}, err
	}
	defer a.close()
	if a.first.Size > MaxUnpackedBytes {
		return Meta{}, fmt.Errorf("%w: %s unpacks to %d bytes, more than the limit of %d", ErrTooLarge, magosv1.PlanJSONFile, a.first.Size, int64(MaxUnpackedBytes))
	}
	sum := sha256.New()
	entry := io.TeeReader(io.LimitReader(a.tr, MaxUnpackedBytes), sum)
	readErr := read(entry)
	if _, err := io.Copy(io.Discard, entry); err != nil {
		return Meta{}, a.wrap(err)
	}
	if err := checkDigest("sha256:"+hex.EncodeToString(sum.Sum(nil)), a.meta.Digest); err != nil {
		return Meta{}, err
	}
	if err := a.verify(); err != nil {
		return Meta{}, err
	}
	if readErr != nil {
		return Meta{}, readErr
	}
	m := a.meta
	m.Size = a.read
	return m, nil
}

// LoadJSONSealed is LoadJSON for a plan whose bundle digest is known
// (status.plan.bundleDigest): it also reads the rest of the stream and
// refuses, with ErrCorrupt, a stored plan whose stream has another sha256.
// Nothing is returned before the whole stream is checked.
func LoadJSONSealed(ctx context.Context, g Getter, workspace string, maxJSON int64, bundleDigest string) (*Plan, error) {
	p, a, err := loadJSON(ctx, g, workspace, maxJSON)
	return sealed(p, a, err, bundleDigest)
}

// LoadTextSealed is LoadText for a plan whose bundle digest is known: the
// text is returned only when the whole stream has that sha256, so it is
// the text stored with the plan the controller recorded (the plan digest
// covers plan.json only).
func LoadTextSealed(ctx context.Context, g Getter, workspace string, maxText int64, bundleDigest string) (*Plan, error) {
	p, a, err := loadText(ctx, g, workspace, maxText)
	return sealed(p, a, err, bundleDigest)
}

// sealed finishes a load of p from a (nil when it could not be opened)
// that ended with err: it checks the rest of the stream against
// bundleDigest and closes the archive.
func sealed(p *Plan, a *archive, err error, bundleDigest string) (*Plan, error) {
	if a != nil {
		defer a.close()
	}
	if err != nil {
		return nil, err
	}
	if err := a.seal(bundleDigest); err != nil {
		return nil, err
	}
	return p, nil
}

// seal reads what is left of the stream and checks its sha256 against
// chunk 0's and against want.
func (a *archive) seal(want string) error {
	if want == "" {
		return fmt.Errorf("%w: no bundle digest to check the stored plan %s against", ErrCorrupt, a.meta.ID)
	}
	if err := a.verify(); err != nil {
		return err
	}
	if !sameSHA256(a.meta.SHA256, want) {
		return fmt.Errorf("%w: the stored plan %s has bundle digest %s, not the recorded %s", ErrCorrupt, a.meta.ID, a.meta.SHA256, want)
	}
	return nil
}
