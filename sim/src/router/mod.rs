//! The router's cycle-exact golden model: the contract the rust-hdl RTL must
//! match flit for flit, and the engine of the network simulator.
//!
//! # Ports and interfaces
//! `P = topology.num_ports()` bidirectional ports, numbered as in
//! [`crate::topology`] (x+, x-, y+, y-, z+, z- for each dimension of size > 1,
//! then the local ports). `N = classes * vcs_per_class` VCs per link; VC `v`
//! belongs to class `v / vcs_per_class`; class 1 has strict priority over
//! class 0. Per port, per cycle:
//! * input  `in_valid, in_flit{data, head, tail, vc}` — a flit from upstream;
//! * input  `credit_in_valid, credit_in_vc` — one credit returned by downstream;
//! * output `out_valid, out_flit{data, head, tail, vc}` — registered;
//! * output `credit_out_valid, credit_out_vc` — registered, one credit to upstream.
//!
//! # State (all registered)
//! * input buffer per (input port, VC): a FIFO of `buffer_flits` flits;
//! * input VC state per (input port, VC): `Idle`, `Active(out port, out VC)` or `Dropping`;
//! * credit counter per (output port, VC): reset to `buffer_flits` (the
//!   downstream buffer depth), range `0..=buffer_flits`;
//! * busy bit per (output port, VC): set while a packet holds the VC;
//! * round-robin pointers: per input port and class over that class's VCs,
//!   per output port and class over the input ports; reset to 0;
//! * output register per port (valid + flit) and credit register per port (valid + VC);
//! * counter per input port: packets dropped (`dropped_packets`); protocol
//!   error counters `flit_errors` (flit on a VC >= N or into a full buffer;
//!   the flit is discarded) per input port and `credit_errors` (credit on a
//!   VC >= N or above `buffer_flits`; ignored) per output port. In the RTL
//!   they are `router.counter_bits` wide (default 16) and wrap; the model
//!   counts without bound and `RouterParams::counter_value` gives the
//!   RTL's value.
//!
//! # One cycle
//! Everything below is combinational from the registered state at the start
//! of the cycle (nothing bypasses from this cycle's inputs), then applied at
//! the clock edge.
//!
//! 1. **Requests.** Each input VC whose buffer is not empty may request,
//!    according to its front flit:
//!    * `Active(o, w)`: forward to output port `o`, VC `w`, if `credits[o][w] > 0`
//!      (always true for packets of at most `max_packet_flits` flits, see 2).
//!    * `Dropping`: drop.
//!    * `Idle`, front flit not a head: drop (an orphan flit; starts a bad packet).
//!    * `Idle`, front flit a head: the header is the head flit's bits 127:0
//!      (128/256-bit flits) or, for 64-bit flits, the front flit's bits 63:0
//!      as header bits 63:0 and the second flit's bits 63:0 as header bits
//!      127:64 — so a 64-bit head waits until both header flits are buffered
//!      (a 64-bit head that is also a tail is a truncated header: drop). The
//!      packet is **bad** if the header check fails (the SECDED check byte
//!      ecc\[7:0\] differs from the code of bits 111:0, i.e. any detected error;
//!      the router never corrects — see [`header_fields`]), a destination
//!      coordinate (x 42:39, y 38:35, z 34:31) is outside `dims`, or (at the
//!      destination router) `fpga` (30:29) `>= local_ports`: drop. Otherwise
//!      [`route_compute`] gives the output port `o` and the set of output VCs
//!      the head may take (one VC per flow with `vc_select = flow`, the
//!      whole eligible half with `free`); the head requests `(o, w)` for the
//!      lowest-numbered `w` of the set that is not busy and has
//!      `credits[o][w] >= max_packet_flits` (virtual cut-through), else it
//!      does not request this cycle. (Only one input wins an output port per
//!      cycle, so two heads never take one output VC.)
//! 2. **Input arbitration** (per input port): among its requesting VCs, those
//!    of class 1 if any, else class 0; round-robin from the port's pointer of
//!    that class. One VC per input port.
//! 3. **Output arbitration** (per output port): among the input ports whose
//!    chosen request is a forward to this port, those whose VC is class 1 if
//!    any, else class 0; round-robin from the port's pointer of that class.
//!    A drop needs no output port and is always granted.
//!    Two heads can never both take one output VC: both would need the same
//!    output port, which grants one input per cycle.
//!
//!    Steps 2-3 are the `separable` allocator (`router.allocator`, the
//!    default). The matching allocators (`islip`, `wavefront`) replace them:
//!    an input port with a VC that requests a drop drops (class 1 first,
//!    round-robin) and requests no output; otherwise it wants every output
//!    one of its VCs requests (the pair is class 1 if one of those VCs is).
//!    `islip`: `alloc_iterations` rounds over the unmatched ports of grant
//!    (each output: class-1 pairs first, round-robin from its pointer of the
//!    class) and accept (each input: class-1 grants first, round-robin from
//!    its accept pointer over the outputs); pointers move past the partner
//!    only for first-round matches. `wavefront`: class-1 pairs, then all
//!    pairs, each pass over the diagonals `(p + o) mod P` from a rotating
//!    first diagonal (which moves on after a cycle with a match), matching
//!    every wanted pair whose ports are still free. A matched input then pops
//!    the VC among those of the pair's class that want its output,
//!    round-robin from its pointer of that class (which moves past it); the
//!    output port's separable pointers are not used. (Two heads never take
//!    one output VC: one input per output.) The exact algorithm is
//!    `model::Router::{islip, wavefront}`.
//! 4. **Edge.**
//!    * Every output register and credit register is first cleared (so each
//!      holds a value for exactly one cycle).
//!    * Arriving flits are written to the tail of the buffer of their VC; a
//!      flit arriving at a buffer that was full at the start of the cycle is
//!      discarded and counted in `flit_errors` (cannot happen with a correct
//!      upstream, which only sends with a credit).
//!    * Each granted forward pops the front flit of its input VC into the
//!      output register of `o` with its `vc` field replaced by `w`, and
//!      decrements `credits[o][w]`. A head (not tail) sets `busy[o][w]` and the
//!      input VC becomes `Active(o, w)`; a tail clears `busy[o][w]` and the
//!      input VC becomes `Idle` (a one-flit packet leaves both unchanged).
//!      Both round-robin pointers of the winner's class move past the winner.
//!    * Each granted drop pops the front flit; if the input VC was `Idle`
//!      the port's `dropped_packets` counter increments and the VC becomes
//!      `Dropping` (unless the flit is a tail); a tail returns it to `Idle`.
//!      The input port's pointer of the class moves past the winner.
//!    * Every pop (forward or drop) frees its buffer slot at this edge and sets
//!      the input port's credit register to (valid, VC): upstream sees the
//!      credit during the next cycle. At most one pop per input port per cycle.
//!    * A credit arriving on an output port increments `credits[o][vc]` at this
//!      edge, after this cycle's decrement: it is first usable next cycle. A
//!      credit and a send on the same VC in one cycle leave the counter unchanged.
//!
//! # Latency and throughput
//! A head flit on an input during cycle `t` is written at the edge ending `t`;
//! during `t+1` it requests and wins (at zero load) and is written into the
//! output register; it is on the output during `t+2`: **2 cycles header-in to
//! header-out** (for 64-bit flits counted from the second header flit, i.e. 3
//! cycles from the first). Body flits follow one per cycle per port. A tail
//! leaving during cycle `t+1` lets the next head of the same input VC request
//! during `t+2`, so back-to-back packets stream without a bubble.
//!
//! The credit loop of a link with `L` cycles of wire delay each way: a slot
//! popped at the edge ending cycle `t` is credited upstream during `t+1+L`,
//! usable upstream during `t+2+L`, and the new flit is written at the edge
//! ending `t+3+2L` at the earliest.
//!
//! # Reserved and unused header bits
//! The router reads only the ecc, destination and (through the check) the
//! other protected bits; it never rewrites a header (only the flit's VC
//! sideband). The header's own `vc` field is not read: a packet's class is
//! its sideband VC's class. Networks with a dimension above 16 exist only in
//! simulation and read a fifth coordinate bit from the coordinates' reserved
//! bits (see [`header_fields`]); hardware routers ignore those bits.
//!
//! # Ordering
//! With `vc_select = flow` a flow (source, destination, class) takes one path
//! and one VC per hop ([`route_compute`]); input buffers are FIFOs and output
//! VCs are not interleaved, so flows stay in order. With `free` a later packet
//! of a flow may take another VC and overtake an earlier one.
//!
//! # Packets longer than `max_packet_flits`
//! They still respect credits (body flits request only with `credits > 0`),
//! but lose the virtual cut-through guarantee (they may stall mid-packet).

pub mod allocator;
pub mod flit;
pub mod harness;
pub mod header_fields;
pub mod input_unit;
pub mod model;
pub mod output_unit;
pub mod params;
pub mod route_compute;

pub use flit::Flit;
pub use header_fields::{Coords, HeaderCheck, HeaderFields};
pub use model::{IvcState, Router, RouterCounters, RouterInputs, RouterOutputs};
pub use params::{Allocator, Dateline, RouterParams, RouterPoint, TieBreak, VcSelect};
pub use route_compute::{BadPacket, RouteCompute, RouteOut};
