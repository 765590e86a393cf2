//! `switch_alloc`: the matching switch allocators of the router
//! (`router.allocator = "islip"` or `"wavefront"`): one module that matches
//! input ports to output ports from the request matrix the input units
//! send, cycle-exact with `exanet_sim::router::model::Router` (its
//! `islip` and `wavefront`, the algorithm's doc is there).
//!
//! Ports:
//! - `clock`; `reset` (synchronous: every pointer, or the diagonal, to 0);
//! - `req`, `req1` (M b): bit `SP*out + in` (`top::request_bit`): input
//!   `in` wants output `out` (`req1`: with a class-1 VC);
//! - `grant_mat` (M b): bit `SP*out + in`: output `out` is matched to input
//!   `in` (the layout of `req`, so each output unit arbitrates over its one
//!   matched input with its own request path);
//! - `match_rows` (M b): the same matrix by input, bit `SP*in + out`.
//!
//! Latency: combinational; the pointers (iSLIP: per output and class over the
//! inputs, per input over the outputs; wavefront: the first diagonal) move at
//! the clock edge.
//!
//! Why Verilog: iterations over unmatched ports read and write the same
//! vectors in order (a grant phase, then an accept phase that removes the
//! matched ports), which rust-hdl's one-`always`-per-module with no
//! read-after-write cannot express without hundreds of prefix-chain
//! signals. The text is the askama template `hdl/templates/router/switch_alloc.v`.
//!
//! Parameters: ports (2..=16), the allocator and (iSLIP) the iterations.

use anyhow::{bail, Context, Result};
use askama::Template;
use exanet_sim::router::{Allocator, RouterParams};
use rust_hdl::prelude::*;

#[derive(Template)]
#[template(path = "router/switch_alloc.v")]
struct SwitchAllocText {
    name: &'static str,
    islip: bool,
    ports: usize,
    iterations: usize,
    all: String,
    /// `SP`, the stride of the request layout, and `M`, the vectors' width.
    sp: usize,
    m: usize,
}

/// The matching switch allocator (the template's text is fixed at construction).
#[derive(LogicBlock)]
pub struct SwitchAlloc<const M: usize> {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, bool>,
    /// Requests, bit `SP*out + in`.
    pub req: Signal<In, Bits<M>>,
    /// The class-1 requests.
    pub req1: Signal<In, Bits<M>>,
    /// The match, bit `SP*out + in`.
    pub grant_mat: Signal<Out, Bits<M>>,
    /// The match, bit `SP*in + out`.
    pub match_rows: Signal<Out, Bits<M>>,
    _body: String,
}

impl<const M: usize> SwitchAlloc<M> {
    /// The allocator of `p` (`p.allocator` is `islip` or `wavefront`).
    pub fn new(p: &RouterParams) -> Result<Self> {
        let ports = p.num_ports();
        if !(2..=16).contains(&ports) {
            bail!("router ports = {ports}: the switch allocator takes 2..=16");
        }
        let islip = match p.allocator {
            Allocator::Islip => true,
            Allocator::Wavefront => false,
            Allocator::Separable => bail!(
                "router.allocator = \"separable\": built by the input and output units, not by switch_alloc"
            ),
        };
        let t = SwitchAllocText {
            name: p.allocator.name(),
            islip,
            ports,
            iterations: p.alloc_iterations,
            all: format!("{:04x}", (1u32 << ports) - 1),
            sp: super::top::port_stride(p),
            m: M,
        };
        let body = t
            .render()
            .context("rendering the router template templates/router/switch_alloc.v")?;
        Ok(SwitchAlloc {
            clock: Default::default(),
            reset: Default::default(),
            req: Default::default(),
            req1: Default::default(),
            grant_mat: Default::default(),
            match_rows: Default::default(),
            _body: body,
        })
    }
}

impl<const M: usize> Logic for SwitchAlloc<M> {
    /// Simulated with Verilator only (the router is co-simulated against its golden model).
    fn update(&mut self) {}

    fn connect(&mut self) {
        self.grant_mat.connect();
        self.match_rows.connect();
    }

    fn hdl(&self) -> Verilog {
        Verilog::Custom(self._body.clone())
    }
}
