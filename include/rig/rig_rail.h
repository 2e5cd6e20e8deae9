/* rig_rail.h: rails, the seed's Rig_remote_abi rails (docs/rails.md).
 *
 * A rail carries a fixed list of transfers {src, dst, length} in each
 * direction between two processes, again and again. Each process holds
 * one end: `outbound` (two copies back to back of the bytes it sends),
 * `inbound` (two copies of the bytes it receives) and `counts` (ready at
 * byte 0, sent at 128, arrived at 256; uint64_t in host order, each alone
 * in its cache line). For a direction of n transfers, count c >= 1 is
 * transfer (c - 1) mod n of rail run (c - 1) / n, in copy ((c - 1) / n) mod
 * 2 of both areas. A program calls the end's ready function with the
 * address of counts and c once transfer c's bytes are in its outbound
 * copy; the rail moves them into the peer's inbound copy and then makes
 * arrived >= c visible there (a reader that sees it with acquire sees the
 * bytes), and stores sent = c here once the source bytes may be rewritten
 * (before arrived reaches c there). A ready may run ahead of sent by what
 * the two copies hold (c <= (sent / n + 2) n); a count past that fails the
 * rail, saying so.
 *
 * The rails of a process are driven by one UCX worker and one rail thread:
 * a put of each transfer, a flush of the endpoint, a remote atomic add on
 * the peer's arrived. Their areas are shared memory no other uid reaches
 * (docs/rails.md, "Memory"). This layer knows no MPI: an end gives the bytes its peer needs
 * (rig_rail_address) and takes the peer's (rig_rail_attach); the job
 * (rig_job_rail) and rig_rail_connect (rig_job.h) carry them. */
#ifndef RIG_RAIL_H
#define RIG_RAIL_H

#include "rig_core.h"
#include "rig_host_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Exported; the rest of librig is hidden (src/librig.map). */
#pragma GCC visibility push(default)

/* The counts area: its size and where each count lies. */
#define RIG_RAIL_COUNTS_BYTES 384
#define RIG_RAIL_READY_AT     0
#define RIG_RAIL_SENT_AT      128
#define RIG_RAIL_ARRIVED_AT   256
/* A copy of outbound or inbound is rounded up to this many bytes. */
#define RIG_RAIL_COPY_ALIGN 256
/* No offset or end of a transfer lies past this. */
#define RIG_RAIL_LIMIT (INT64_C(1) << 60)
/* Every count of an end is raised to this when its rail or job fails, so
 * that no wait on it blocks. */
#define RIG_RAIL_RAISED ((uint64_t)INT64_MAX)

/* One transfer of a direction: `length` bytes at `src` of the sender's
 * outbound copy to `dst` of the receiver's inbound copy. */
typedef struct rig_rail_transfer {
  int64_t src, dst, length;
} rig_rail_transfer;

/* This process's end of a rail (the seed's Rig_remote_abi.end_): host
 * memory the rail made, which the devices of this machine may borrow. */
typedef struct rig_rail_end {
  rig_buffer *outbound;
  rig_buffer *inbound;
  rig_buffer *counts; /* RIG_RAIL_COUNTS_BYTES */
  rig_ready_fn *ready;
} rig_rail_end;

/* How a load finds this machine's rail ends: lookup(ctx, id) gives the end
 * of rail `id`, or NULL when this machine has none. */
typedef struct rig_rails {
  const rig_rail_end *(*lookup)(void *ctx, int64_t id);
  void *ctx;
} rig_rails;

typedef struct rig_rail rig_rail;

/* Checks a rail's transfers: RIG_EINVAL for a length < 1 (`send 2: a
 * length of 0`), a negative offset, an offset or end past 2^60 (compared
 * without overflow), or both directions empty. */
rig_status rig_rail_check(const rig_rail_transfer *send, size_t nsend,
                          const rig_rail_transfer *receive, size_t nreceive, rig_error *err);

/* The bytes of one copy of outbound (of the send transfers) or of inbound
 * (of the receive transfers): the largest end, rounded up to 256. */
uint64_t rig_rail_copy_bytes(const rig_rail_transfer *t, size_t n, bool inbound);

/* The host memory one end takes: two copies of outbound (of `send`) and of
 * inbound (of `receive`), and its counts page. For checked transfers. */
uint64_t rig_rail_end_bytes(const rig_rail_transfer *send, size_t nsend,
                            const rig_rail_transfer *receive, size_t nreceive);

/* Whether an end of `bytes` fits this host now: its areas are shared
 * memory, so at most half of what /dev/shm has free (a peer's end on the
 * same host takes as much again), and within the host's memory beside what
 * rails hold. RIG_ENOMEM saying what there is: `its end needs 256 MiB of
 * shared memory, past half of the 60 MiB /dev/shm has free`. rig_rail_create
 * checks it before it makes anything. */
rig_status rig_rail_room(uint64_t bytes, rig_error *err);

/* Makes this process's end of rail `id` (id >= 1): its areas on the host,
 * zero-filled and page aligned, registered with the process's UCX context
 * (made, with the rail thread, at the first end). `send` flows from here to
 * the peer, `receive` back. The end takes counts once attached. RIG_EINVAL
 * as rig_rail_check, or for an id already in use in this process;
 * RIG_ENOMEM, before anything is made, as rig_rail_room, or when the
 * memory cannot be made (`rail 1: cannot make ...`). */
rig_status rig_rail_create(int64_t id, const rig_rail_transfer *send, size_t nsend,
                           const rig_rail_transfer *receive, size_t nreceive, rig_rail **out,
                           rig_error *err);

/* The bytes the peer's end needs to reach this one (UCX's worker address,
 * the areas' addresses and remote keys, the transfers): valid while the
 * rail is. */
void rig_rail_address(const rig_rail *r, const void **bytes, size_t *len);

/* Connects the end to its peer's, from the bytes rig_rail_address gave
 * there. RIG_EINVAL if they are not an end's, or the peer's transfers are
 * not this end's mirrored (its send, this receive); RIG_ESYS with UCX's
 * status if the peer cannot be reached. */
rig_status rig_rail_attach(rig_rail *r, const void *peer, size_t len, rig_error *err);

/* What the layer above learns of a rail and does at its release: failed
 * is called once, on the rail thread, when the rail fails (UCX reports the
 * peer lost, or this end's program broke its rules: rig_rail_misused; the
 * end's counts are already raised); release is called by rig_rail_release
 * before this end is drained and must not wait on the peer (the job asks
 * the other machine to release its end there), released after this end is
 * dropped (the job waits for the other machine's answer there). */
typedef struct rig_rail_hooks {
  void (*failed)(void *ctx, rig_rail *r, const char *why);
  void (*release)(void *ctx, rig_rail *r);
  void (*released)(void *ctx, rig_rail *r);
  void *ctx;
} rig_rail_hooks;
void rig_rail_set_hooks(rig_rail *r, const rig_rail_hooks *hooks);
/* A rail whose ends are both elsewhere (the controller made it between two
 * agents): its id and its release hook only. */
rig_status rig_rail_create_elsewhere(int64_t id, rig_rail **out, rig_error *err);

int64_t rig_rail_id(const rig_rail *r);
/* This process's end, or NULL when both ends are elsewhere. */
const rig_rail_end *rig_rail_end_of(const rig_rail *r);
/* Whether the rail failed (its peer lost, or it was raised), and why. */
bool rig_rail_failed(const rig_rail *r, rig_error *why);
/* Whether it failed by this end's program's fault (a ready past what the
 * rail may send), rather than its peer's or the job's. */
bool rig_rail_misused(const rig_rail *r);

/* Raises every count of this end to RIG_RAIL_RAISED, with why as the
 * rail's failure, and stops its transfers. */
void rig_rail_raise(rig_rail *r, const char *why);
/* Raises every end of this process (a job failed). */
void rig_rails_raise_all(const char *why);

/* Waits until the count at `count` (an end's counts area plus
 * RIG_RAIL_ARRIVED_AT or RIG_RAIL_SENT_AT) reaches c, with acquire: true
 * then, false once it is raised (the rail or the job failed). The wait host
 * code is lent as rig_grid.calls->rail_wait (rig_host_abi.h), for any
 * thread: where the rail's peer reaches this process by emulated RMA (TCP
 * between hosts), the count lands only by this process's progress of UCX,
 * which the waiting thread then does itself, spinning a little, yielding a
 * while and sleeping on the transport's event; elsewhere (shared memory,
 * hardware RMA) it spins, yields, then sleeps 50 us at a time. */
bool rig_rail_wait(const void *count, uint64_t c);
/* A run that may wait on rails is in flight (on), or no longer (off):
 * counted. Meanwhile the rail thread keeps progressing UCX for peers
 * reached by emulated RMA whenever no thread waits in rig_rail_wait, rather
 * than sleeping on the transport's event after a short idle, so that a
 * count a GPU's stream or a cpu:N kernel spins on lands without a wake-up.
 * The job says so around each run on every machine (rig_job_run_begin,
 * rig_job_run_end). */
void rig_rails_serve(bool on);

/* Tracing (docs/internals.md "Tracing"): fn, when not NULL, is called on
 * the thread that moves a rail (the rail thread, or one that calls ready
 * and finds the worker free) as the put of count c made ready is posted
 * (READY, c), and as the add that makes the peer's arrived c completes
 * here (ARRIVED, c; UCX's completion of the add: it has left, the peer
 * sees it soon after). One test of a pointer when NULL, the default. */
typedef enum rig_rail_stamp { RIG_RAIL_STAMP_READY = 1, RIG_RAIL_STAMP_ARRIVED = 2 } rig_rail_stamp;
typedef void (*rig_rail_stamp_fn)(int64_t rail, rig_rail_stamp what, uint64_t count);
void rig_rail_set_stamp(rig_rail_stamp_fn fn);

/* Releases the rail, after the programs that use it, once, from any thread:
 * r is gone after it (freed once no buffer views its areas). What was made
 * ready is sent first; both ends then drop their areas once neither has a
 * put in flight to the other (a handshake over the rail). A rail whose
 * peer is lost or does not answer within RIG_JOB_SILENCE keeps its areas
 * mapped, so that no late put lands in freed memory. */
void rig_rail_release(rig_rail *r);

/* Shared areas: host memory UCX allocates (posix shared memory of mode 0600,
 * unlinked: docs/rails.md, "Memory"), which a process on the same host maps into its own address
 * space, so that it reads and writes it with plain loads and stores (the job's hand-overs and done
 * reports of runs go this way). Zero-filled, page aligned. */
typedef struct rig_area rig_area;
rig_status rig_area_make(size_t bytes, rig_area **out, rig_error *err);
/* The bytes a peer needs to map it (host name, UCX's worker address, the
 * area's address and remote key): valid while the area is. */
void rig_area_address(const rig_area *a, const void **bytes, size_t *len);
/* Maps a peer's area here, from the bytes rig_area_address gave there.
 * RIG_EREFUSED when it cannot be mapped (another host, or transports that
 * map nothing, such as UCX_TLS=tcp,self): the peer is then reached some
 * other way. RIG_EINVAL if the bytes are not an area's. */
rig_status rig_area_map(const void *bytes, size_t len, rig_area **out, rig_error *err);
/* The area's memory here, and its length. */
void *rig_area_base(const rig_area *a);
size_t rig_area_length(const rig_area *a);
/* Unmaps a mapped area, or frees a made one (a peer's mapping of it stays
 * valid until the peer unmaps it). NULL is fine. */
void rig_area_release(rig_area *a);

/* The UCX_TLS the rails' engine takes: the user's (RIG_UCX_TLS where set,
 * else UCX_TLS), without sysv (docs/rails.md "Memory"), for a tool that
 * lists the transports librig uses. RIG_EINVAL when the user's names sysv
 * itself, or is too long. */
rig_status rig_rail_ucx_tls(char *out, size_t size, rig_error *err);
/* RIG_UCX_TLS as librig read it (its environment table,
 * docs/environment.md), or NULL when it is unset or empty: for a tool that
 * says what the user gave, without reading the environment again. */
const char *rig_rail_ucx_tls_own(void);

/* Peers (docs/rails.md "Peers"): processes this one reaches by UCX
 * messages and remote memory where their memory cannot be mapped here (on
 * another host, say). One endpoint per peer, with peer error handling: a
 * peer that is gone is reported (lost), and every wait on it ends. */
typedef struct rig_peer rig_peer;
/* The most bytes of a message, the kinds of message (0 to KINDS - 1), and
 * the most bytes of an address or a remote key. */
#define RIG_PEER_MESSAGE_MAX 1536
#define RIG_PEER_KINDS       16
#define RIG_PEER_ADDRESS_MAX 4096
/* This process's address, which a peer connects to: valid until the
 * matching rig_peer_self_release (it holds the rails' engine). */
rig_status rig_peer_self(const void **address, size_t *len, rig_error *err);
void rig_peer_self_release(void);
/* Messages of kind `kind` go to fn(ctx, bytes, len) from now on, on a
 * thread that progresses the engine's worker (the rail thread, or one in
 * rig_peer_progress): fn must not block. One handler a kind per process. */
typedef void rig_peer_handler(void *ctx, const void *bytes, size_t len);
rig_status rig_peer_listen(uint16_t kind, rig_peer_handler *fn, void *ctx, rig_error *err);
void rig_peer_unlisten(uint16_t kind);
/* Connects to the peer at address (its rig_peer_self). A wait on the peer
 * (a send that finds every slot busy, a remote copy) ends when it is lost
 * or *cancel (when not NULL) is true; lost(ctx, why) is called once, on a
 * progressing thread, when UCX reports it lost. */
rig_status rig_peer_connect(const void *address, size_t len, const _Atomic bool *cancel,
                            void (*lost)(void *ctx, const char *why), void *ctx, rig_peer **out,
                            rig_error *err);
/* Closes the endpoint once its sends are out (forced when the peer is
 * lost). NULL is fine. False when the close is still under way (a peer
 * that stopped answering): UCX may yet call lost, whose ctx must stay. */
bool rig_peer_release(rig_peer *p);
/* Sends len bytes (at most RIG_PEER_MESSAGE_MAX) as a message of kind;
 * the bytes are copied, the call never waits for the peer's answer.
 * Messages of a peer may arrive in another order than they were sent. */
rig_status rig_peer_send(rig_peer *p, uint16_t kind, const void *bytes, size_t len, rig_error *err);
/* Progresses the engine's worker once if no other thread does (a waiter's
 * spin): whether anything happened. */
bool rig_peer_progress(void);
/* A thread about to call rig_peer_progress in a loop says so (on), and
 * when it stops (off): meanwhile the rail thread does not watch for
 * messages itself, so that one this thread takes wakes no other. */
void rig_peer_polling(bool on);
/* A polling thread with nothing to progress sleeps on the worker itself,
 * as on a futex: returns when a message or other event is there (then
 * progress it), when rig_peer_nudge is called, or after timeout_ns; at
 * once when events are already there (progressed) or *word (when not
 * NULL) is no longer seen. Whoever changes *word then nudges; a message
 * handled on another thread nudges too. */
void rig_peer_wait(const _Atomic uint32_t *word, uint32_t seen, int64_t timeout_ns);
/* Wakes every thread asleep in rig_peer_wait (something it may wait for,
 * other than a message, happened). */
void rig_peer_nudge(void);
/* Memory of this process a peer may put to and get from: base..base+len
 * registered, and the key the peer needs (valid while registered). */
typedef struct rig_registration rig_registration;
rig_status rig_memory_register(void *base, size_t len, rig_registration **out, rig_error *err);
void rig_registration_key(const rig_registration *r, const void **key, size_t *len);
void rig_registration_release(rig_registration *r);
/* A peer's registered memory, from its key. */
typedef struct rig_peer_key rig_peer_key;
rig_status rig_peer_key_unpack(rig_peer *p, const void *key, size_t len, rig_peer_key **out,
                               rig_error *err);
void rig_peer_key_release(rig_peer_key *k);
/* Moves len bytes between local memory and the peer's at address remote
 * (inside memory it registered, under key k), and returns once they are
 * at their destination; RIG_ELOST when the peer is lost or the wait is
 * cancelled first. */
rig_status rig_peer_put(rig_peer *p, const void *local, uint64_t remote, size_t len,
                        rig_peer_key *k, rig_error *err);
rig_status rig_peer_get(rig_peer *p, void *local, uint64_t remote, size_t len, rig_peer_key *k,
                        rig_error *err);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
