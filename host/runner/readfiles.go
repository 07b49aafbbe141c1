package runner

import (
	"context"
	"encoding/binary"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/host/confine"
)

// The guest's host functions besides WASI: moat.walk_stop and
// moat.claim_unit (walkstop.go),
// moat.stat (below) and moat.read_files, a batch of
// one folder's small files read whole in one call, each opened as
// path_open would open it (confine's MountControl.ReadFiles says how):
//
//	read_files(dir, dir_len, names, names_len, buf, buf_len, sizes, count) -> decided
//
// Every argument is guest memory: the folder's path, count names one
// after another each ended by a NUL, the buffer the files are read into,
// and count int32s for their sizes (-1: open it yourself). It returns how
// many names it decided. Memory out of the guest's bounds, or a call from
// an instance with no filesystem, decides none, and the guest then opens
// them itself, so the answer never depends on this call working.
//
// moat.stat answers what WASI's filestat leaves out of a path's
// description, its permission bits and the times the host keeps
// (confine's MountControl.Attrs says how it is resolved):
//
//	stat(path, path_len, out) -> 0 described, 1 not
//
// path is the path from the preopen, raw bytes; out is guest memory of
// proto.AttrsSize bytes, written only when the answer is 0.
const (
	HostModule    = "moat"
	readFilesName = "read_files"
	statName      = "stat"
)

// maxReadFilesNames bounds one call's names, and so the host's work
// between two looks at the guest's clock.
const maxReadFilesNames = 256

// InstantiateHost adds the moat host module to rt; the guest cannot be
// instantiated without it. The functions serve the filesystem that
// [WithMount] put in the context the guest runs under.
func InstantiateHost(ctx context.Context, rt wazero.Runtime) error {
	i32, i64 := api.ValueTypeI32, api.ValueTypeI64
	_, err := rt.NewHostModuleBuilder(HostModule).
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(readFiles), []api.ValueType{i32, i32, i32, i32, i32, i32, i32, i32}, []api.ValueType{i32}).
		WithParameterNames("dir", "dir_len", "names", "names_len", "buf", "buf_len", "sizes", "count").
		Export(readFilesName).
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(walkStop), []api.ValueType{i32, i32, i32, i64, i64, i32, i32}, []api.ValueType{i32}).
		WithParameterNames("at", "at_len", "shard", "hits", "bytes", "buf", "buf_len").
		Export(walkStopName).
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(claimUnit), []api.ValueType{i32, i32}, []api.ValueType{i32}).
		WithParameterNames("unit", "unit_len").
		Export(claimUnitName).
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(stat), []api.ValueType{i32, i32, i32}, []api.ValueType{i32}).
		WithParameterNames("path", "path_len", "out").
		Export(statName).
		Instantiate(ctx)
	return err
}

// mountKey is the context key of the calling instance's MountControl.
type mountKey struct{}

// WithMount is ctx for running a guest whose host functions serve ctl's
// filesystem.
func WithMount(ctx context.Context, ctl *confine.MountControl) context.Context {
	return context.WithValue(ctx, mountKey{}, ctl)
}

func readFiles(ctx context.Context, mod api.Module, stack []uint64) {
	var a [8]uint32
	for i := range a {
		a[i] = api.DecodeU32(stack[i])
	}
	stack[0] = 0 // the result's slot is the first argument's: decided none
	ctl, _ := ctx.Value(mountKey{}).(*confine.MountControl)
	mem := mod.Memory()
	if ctl == nil || mem == nil {
		return
	}
	count := min(a[7], maxReadFilesNames)
	dir, ok1 := mem.Read(a[0], a[1])
	packed, ok2 := mem.Read(a[2], a[3])
	buf, ok3 := mem.Read(a[4], a[5])
	out, ok4 := mem.Read(a[6], 4*count)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return
	}
	// The names are copied out of guest memory before any file is read
	// into it (buf may overlap them): one string, cut at each NUL.
	all := string(packed)
	names := make([]string, 0, count)
	for len(all) > 0 && uint32(len(names)) < count {
		end := 0
		for end < len(all) && all[end] != 0 {
			end++
		}
		if end == len(all) {
			break // a name without its NUL: not one
		}
		names = append(names, all[:end])
		all = all[end+1:]
	}
	var sizes [maxReadFilesNames]int32
	n := ctl.ReadFiles(string(dir), names, buf, sizes[:len(names)])
	for i := range n {
		binary.LittleEndian.PutUint32(out[4*i:], uint32(sizes[i]))
	}
	stack[0] = api.EncodeU32(uint32(n))
}

// stat is moat.stat: 1 (not described) for a path out of the guest's
// memory, an instance with no filesystem, or any error of the walk (a
// denial, an escape, a missing file), which the guest's own lstat of the
// path reports.
func stat(ctx context.Context, mod api.Module, stack []uint64) {
	p, n, at := api.DecodeU32(stack[0]), api.DecodeU32(stack[1]), api.DecodeU32(stack[2])
	stack[0] = api.EncodeU32(1)
	ctl, _ := ctx.Value(mountKey{}).(*confine.MountControl)
	mem := mod.Memory()
	if ctl == nil || mem == nil {
		return
	}
	name, ok1 := mem.Read(p, n)
	out, ok2 := mem.Read(at, proto.AttrsSize)
	if !ok1 || !ok2 {
		return
	}
	a, err := ctl.Attrs(string(name))
	if err != nil {
		return
	}
	a.Put(out)
	stack[0] = 0
}
