// Package rdmacm will mirror the kernel's RDMA CM ABI
// (/dev/infiniband/rdma_cm, rdma_user_cm.h) with librdmacm's semantics,
// using only the standard library and golang.org/x/sys.
//
// Not implemented yet: RDMA CM is its own issue.
package rdmacm
