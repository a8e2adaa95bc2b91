// Package bufs is the one helper the packages' reusable buffers share
// (workspaces, batches, packed operands kept from call to call).
package bufs

// Resize is s[:n] when s can hold n elements, else new memory of n zero
// elements. It does not clear what s held: callers overwrite it.
func Resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}
