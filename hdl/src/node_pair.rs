//! `node_pair`: a generated structural top joining network interfaces
//! through RTL routers: one NI ([`crate::ni`]) on the local port of every
//! router of an `A x B x C` network ([`crate::router::network`]; the default
//! is two nodes, `2x1x1`), for the end-to-end co-simulation `exanet cosim
//! node-pair`.
//!
//! # Structure (top module [`node_pair_top_name`])
//! Per node `n` (node index of `exanet_sim::topology`, coordinates
//! `x, y, z`, fpga 0, given to the NI on `node` as a constant):
//! - NI flit output → the router's local input (`n<n>_l0_in_*`); the
//!   router's credit output → the NI's `credit_in_*`. The NI's
//!   `buffer_flits` must equal the router's `buffer_flits` (the credits of a
//!   router input VC). The router has two message classes
//!   (`router.classes = 2`; VC `v` is of class `v / vcs_per_class`, and
//!   `ni.vcs_per_class = router.vcs_per_class`): the NI sends requests and
//!   data on `ni.vc` (a class-0 VC) and control responses on `ni.resp_vc`
//!   (a class-1 VC), so that responses never wait behind requests
//!   (protocol-deadlock freedom, `crate::ni` module doc).
//! - The router's local output → an **ejection adapter** (module
//!   `<top>_eject`) → the NI's flit input. The router is a per-VC
//!   virtual-cut-through sender (a head needs `max_packet_flits` credits of
//!   its VC), but the NI's receive contract (`crate::ni` module doc) is one
//!   ring per message class shared by that class's VCs — class 0
//!   [`rx_buffer_flits`] flits, class 1 [`rx_class1_flits`] flits: the
//!   sender starts a packet of class `c` only when it holds credits of
//!   class `c` for a largest packet ([`rx_packet_flits`]). The adapter is
//!   the router's downstream buffer (one FIFO of `buffer_flits` flits per
//!   VC, a credit to the router for each flit it passes on) and the NI's
//!   sender: it keeps one credit pool per class (class 0 starting at
//!   `rx_buffer_flits`, class 1 at `rx_class1_flits`; each flit it passes
//!   on takes one from its packet's class, each `credit_out_*` gives one
//!   back to the class of `credit_out_vc`), picks round-robin a VC whose
//!   FIFO is non-empty and whose class's pool holds a largest packet (a
//!   class-0 packet waiting for credits never holds up a class-1 packet),
//!   and forwards that VC's packet flit by flit up to its tail (never
//!   interleaving packets). Its outputs are registered. It counts protocol
//!   errors in `n<n>_eject_errors` (a flit on a VC `>= N` or into a full
//!   FIFO, a packet not starting with a head, a credit from the NI on a VC
//!   `>= N` or beyond its class's pool).
//!
//! # Ports
//! - `clock`; `reset` (synchronous, to every NI, router, link register and
//!   adapter; required once after power-on);
//! - per node, every NI port except `clock`, `reset`, `node` and the flit /
//!   credit ports, unchanged but prefixed `n<n>_` (AXI4-Lite slave
//!   `n<n>_s_*`, AXI4 master read and write `n<n>_m_*`, and the NI's
//!   observability outputs `n<n>_tx_pick`, `n<n>_tx_busy`, `n<n>_rsp_pick`,
//!   `n<n>_rx_commit`, `n<n>_rx_busy`, `n<n>_rx_class`, and its interrupt
//!   `n<n>_irq`);
//! - per node, monitors of the NI's flit interfaces (outputs):
//!   `n<n>_tx_valid`, `_tx_data`, `_tx_head`, `_tx_tail`, `_tx_vc` (the flit
//!   the NI sends), `n<n>_rx_valid`, `_rx_data`, `_rx_head`, `_rx_tail`,
//!   `_rx_vc` (the flit the NI receives), `n<n>_rx_credit_valid` (the NI
//!   returns a receive credit); `n<n>_eject_errors` (32 b);
//! - per node and router port `q`, the router's counters
//!   `n<n>_dropped_packets_<q>`, `n<n>_flit_errors_<q>`,
//!   `n<n>_credit_errors_<q>` (32 b).
//!
//! The NI's port list is read from its emitted top module, so ports added
//! to the NI appear here (prefixed) without a change to this generator.

use crate::emit::Emitted;
use crate::ni::{
    emit_ni, ni_top_name, rx_buffer_flits, rx_class1_flits, rx_packet_flits, NiRtlParams,
};
use crate::router::{emit_network, router_top_name};
use anyhow::{bail, Context, Result};
use exanet_sim::packet::coords::Coords;
use exanet_sim::router::RouterParams;
use std::fmt::Write;

/// Parameters of the joined design.
#[derive(Clone, Debug)]
pub struct NodePairParams {
    /// Every node's NI.
    pub ni: NiRtlParams,
    /// The routers and their network (one local port).
    pub router: RouterParams,
    /// Register stages per link direction.
    pub link_latency: usize,
}

impl Default for NodePairParams {
    /// Two nodes (`2x1x1` torus, latency-1 links), the default router
    /// (2 classes x 2 VCs, 32-flit buffers) and the default NI, sending
    /// requests on VC 0 and responses on the first class-1 VC.
    fn default() -> Self {
        let router = RouterParams {
            topology: exanet_sim::topology::Topology::new([2, 1, 1], [true, false, false], 1)
                .expect("valid topology"),
            ..Default::default()
        };
        NodePairParams {
            ni: NiRtlParams {
                buffer_flits: router.buffer_flits,
                vc: 0,
                resp_vc: router.vcs_per_class,
                vcs_per_class: router.vcs_per_class,
                ..Default::default()
            },
            router,
            link_latency: 1,
        }
    }
}

impl NodePairParams {
    /// Check the NI and the router fit together (each is validated by its
    /// own emitter).
    pub fn validate(&self) -> Result<()> {
        let r = &self.router;
        r.validate()?;
        if r.classes != 2 {
            bail!(
                "node_pair: router.classes = {}: must be 2 (the NI sends control responses on class 1, requests on class 0; one class can deadlock)",
                r.classes
            );
        }
        if self.ni.vcs_per_class != r.vcs_per_class {
            bail!(
                "node_pair: ni.vcs_per_class = {} must equal router.vcs_per_class = {} (the NI tells a flit's class by its VC)",
                self.ni.vcs_per_class,
                r.vcs_per_class
            );
        }
        if self.ni.vc >= r.vcs_per_class {
            bail!(
                "node_pair: ni.vc = {}: must be a class-0 VC of the router, below router.vcs_per_class = {}",
                self.ni.vc,
                r.vcs_per_class
            );
        }
        if !(r.vcs_per_class..r.num_vcs()).contains(&self.ni.resp_vc) {
            bail!(
                "node_pair: ni.resp_vc = {}: must be a class-1 VC of the router, in {}..={} (router.vcs_per_class = {})",
                self.ni.resp_vc,
                r.vcs_per_class,
                r.num_vcs() - 1,
                r.vcs_per_class
            );
        }
        crate::ni::Geometry::new(&self.ni)?;
        if r.topology.local_ports != 1 {
            bail!(
                "node_pair: topology.local_ports = {}: must be 1 (one NI per router)",
                r.topology.local_ports
            );
        }
        if r.flit_bits != 128 {
            bail!(
                "node_pair: router.flit_bits = {}: must be 128 (the NI's flit width)",
                r.flit_bits
            );
        }
        if self.ni.buffer_flits != r.buffer_flits {
            bail!(
                "node_pair: ni.buffer_flits = {} must equal router.buffer_flits = {} (the NI's credits are the router input VC's buffer)",
                self.ni.buffer_flits,
                r.buffer_flits
            );
        }
        let rx = rx_packet_flits(self.ni.ni.max_payload_bytes);
        if r.max_packet_flits < rx {
            bail!(
                "node_pair: router.max_packet_flits = {} < {rx}, the NI's longest packet (ni.max_payload_bytes = {})",
                r.max_packet_flits,
                self.ni.ni.max_payload_bytes
            );
        }
        Ok(())
    }
}

/// Top module name, e.g. `exanet_nodes_2x1x1_k1_c4_d16_s4_m64_p256_a40_w8_b32_v0r2q2_t8`.
pub fn node_pair_top_name(p: &NodePairParams) -> String {
    let d = p.router.topology.dims;
    let ni = ni_top_name(&p.ni);
    let suffix = ni.strip_prefix("exanet_ni_").unwrap_or(&ni);
    format!(
        "exanet_nodes_{}x{}x{}_k{}_{suffix}",
        d[0], d[1], d[2], p.link_latency
    )
}

/// Names of the NI and router modules instanced by the top (for
/// simulation-build hints such as Verilator `no_inline`).
pub fn instanced_modules(p: &NodePairParams) -> [String; 2] {
    [ni_top_name(&p.ni), router_top_name(&p.router)]
}

/// One port of a module: direction (`true` = input), width, name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortDecl {
    pub input: bool,
    pub width: usize,
    pub name: String,
}

/// The ports of emitted module `text` (rust-hdl's `// Module arguments`
/// declarations: `input wire [h:0] name;`, `output reg name;`).
pub fn module_ports(text: &str) -> Result<Vec<PortDecl>> {
    let mut out = Vec::new();
    for line in text.lines() {
        let t: Vec<&str> = line.split_whitespace().collect();
        let (input, rest) = match t.first() {
            Some(&"input") => (true, &t[1..]),
            Some(&"output") => (false, &t[1..]),
            _ => continue,
        };
        let rest: Vec<&str> = rest
            .iter()
            .copied()
            .filter(|w| *w != "wire" && *w != "reg")
            .collect();
        let (width, name) = match rest.as_slice() {
            [name] => (1, *name),
            [range, name] => {
                let hi = range
                    .strip_prefix('[')
                    .and_then(|r| r.strip_suffix(":0]"))
                    .and_then(|h| h.parse::<usize>().ok())
                    .with_context(|| format!("port range `{range}` in `{}`", line.trim()))?;
                (hi + 1, *name)
            }
            _ => bail!("unexpected port declaration `{}`", line.trim()),
        };
        let name = name.trim_end_matches([';', ',']).to_string();
        out.push(PortDecl { input, width, name });
    }
    if out.is_empty() {
        bail!("no port declarations found");
    }
    Ok(out)
}

/// NI ports joined to the router / adapter inside the top (not exposed).
const NET_PORTS: [&str; 14] = [
    "out_valid",
    "out_data",
    "out_head",
    "out_tail",
    "out_vc",
    "credit_in_valid",
    "credit_in_vc",
    "in_valid",
    "in_data",
    "in_head",
    "in_tail",
    "in_vc",
    "credit_out_valid",
    "credit_out_vc",
];

/// Validate and emit: the NI's modules, the network's, the adapter, the top.
pub fn emit_node_pair(p: &NodePairParams) -> Result<Emitted> {
    p.validate()?;
    let ni = emit_ni(&p.ni)?;
    let net = emit_network(&p.router, p.link_latency)?;
    let ni_text = &ni.modules.last().context("NI top module")?.1;
    let ports = module_ports(ni_text).context("reading the NI's port list")?;
    for need in NET_PORTS.iter().chain(["clock", "reset", "node"].iter()) {
        if !ports.iter().any(|q| q.name == *need) {
            bail!("the NI top `{}` has no port `{need}`", ni.top);
        }
    }
    let top = node_pair_top_name(p);
    let eject = format!("{top}_eject");
    let mut modules = ni.modules.clone();
    modules.extend(net.modules.iter().cloned());
    modules.push((eject.clone(), eject_module(p, &eject)));
    modules.push((
        top.clone(),
        top_module(p, &top, &ni.top, &net.top, &eject, &ports),
    ));
    Ok(Emitted { top, modules })
}

fn range(width: usize) -> String {
    if width == 1 {
        String::new()
    } else {
        format!("[{}:0] ", width - 1)
    }
}

/// Bits to count `0..=n` ([`exanet_sim::bits::count_bits`]).
fn bits_for(n: usize) -> usize {
    exanet_sim::bits::count_bits(n) as usize
}

/// The ejection adapter (see the module doc).
pub(crate) fn eject_module(p: &NodePairParams, name: &str) -> String {
    let n = p.router.num_vcs();
    let vpc = p.router.vcs_per_class;
    let d = p.router.buffer_flits;
    let r0 = rx_buffer_flits(p.ni.ni.max_payload_bytes);
    let r1 = rx_class1_flits(p.ni.ni.max_payload_bytes);
    let rs = [r0, r1];
    let m = rx_packet_flits(p.ni.ni.max_payload_bytes);
    let aw = bits_for(d - 1); // FIFO index
    let cw = bits_for(d); // FIFO count 0..=d
    let pw = bits_for(r0.max(r1)); // pools 0..=r_c
    let vb = bits_for(n - 1); // VC index
    let ext = |s: &str| -> String {
        if vb < 4 {
            format!("{{{}'d0, {s}}}", 4 - vb)
        } else {
            s.to_string()
        }
    };
    let mut v = String::new();
    let _ = writeln!(
        v,
        "// {name}: ejection adapter, router local output ({n} VCs x {d}-flit FIFOs, class = VC / {vpc}) -> NI receive rings (class 0 {r0} flits, class 1 {r1} flits: one credit pool per class)."
    );
    let _ = writeln!(v, "// Generated by exanet (hdl/src/node_pair.rs).");
    let _ = writeln!(
        v,
        "module {name} (\n    input wire clock,\n    input wire reset,\n    input wire r_valid,\n    input wire [127:0] r_data,\n    input wire r_head,\n    input wire r_tail,\n    input wire [3:0] r_vc,\n    output reg r_credit_valid,\n    output reg [3:0] r_credit_vc,\n    output reg n_valid,\n    output reg [127:0] n_data,\n    output reg n_head,\n    output reg n_tail,\n    output reg [3:0] n_vc,\n    input wire n_credit_valid,\n    input wire [3:0] n_credit_vc,\n    output reg [31:0] errors\n);"
    );
    for i in 0..n {
        let _ = writeln!(v, "    reg [129:0] mem_{i} [0:{}];", d - 1);
        let _ = writeln!(v, "    reg [{}:0] wp_{i} = 0;", aw - 1);
        let _ = writeln!(v, "    reg [{}:0] rp_{i} = 0;", aw - 1);
        let _ = writeln!(v, "    reg [{}:0] cnt_{i} = 0;", cw - 1);
        let _ = writeln!(v, "    reg push_{i};");
        let _ = writeln!(v, "    reg pop_{i};");
    }
    let _ = writeln!(v, "    reg active = 0;");
    let _ = writeln!(v, "    reg first = 0;");
    let _ = writeln!(v, "    reg [{}:0] cur = 0;", vb - 1);
    let _ = writeln!(v, "    reg [{}:0] rr = 0;", vb - 1);
    // Credit pools: the NI's free ring words per class. The NI returns a
    // credit on the VC of each freed word; its class names the pool.
    for (c, rc) in rs.iter().enumerate() {
        let _ = writeln!(v, "    reg [{}:0] pool{c} = {pw}'d{rc};", pw - 1);
        let _ = writeln!(v, "    reg pop{c};");
        let _ = writeln!(v, "    reg cred{c};");
    }
    let _ = writeln!(v, "    reg cur_c1;");
    let _ = writeln!(v, "    reg [129:0] front;");
    let _ = writeln!(v, "    reg cur_has;");
    let _ = writeln!(v, "    reg pop;");
    let _ = writeln!(v, "    reg any;");
    let _ = writeln!(v, "    reg [{}:0] pick;", vb - 1);
    let _ = writeln!(v, "    reg start;");
    let _ = writeln!(v, "    reg err;");
    // Combinational, in dependency order.
    let _ = writeln!(v, "    always @(*) begin");
    for i in 0..n {
        let _ = writeln!(v, "        push_{i} = r_valid && r_vc == 4'd{i};");
    }
    let _ = writeln!(v, "        front = 130'd0;");
    let _ = writeln!(v, "        cur_has = 1'b0;");
    let _ = writeln!(v, "        case (cur)");
    for i in 0..n {
        let _ = writeln!(
            v,
            "            {vb}'d{i}: begin front = mem_{i}[rp_{i}]; cur_has = cnt_{i} != {cw}'d0; end"
        );
    }
    if n < 1 << vb {
        let _ = writeln!(
            v,
            "            default: begin front = 130'd0; cur_has = 1'b0; end"
        );
    }
    let _ = writeln!(v, "        endcase");
    let _ = writeln!(v, "        cur_c1 = cur >= {vb}'d{vpc};");
    let _ = writeln!(
        v,
        "        pop = active && cur_has && (cur_c1 ? pool1 != {pw}'d0 : pool0 != {pw}'d0);"
    );
    let _ = writeln!(v, "        pop0 = pop && !cur_c1;");
    let _ = writeln!(v, "        pop1 = pop && cur_c1;");
    let _ = writeln!(
        v,
        "        cred0 = n_credit_valid && n_credit_vc < 4'd{vpc};"
    );
    let below_n = if n < 16 {
        format!(" && n_credit_vc < 4'd{n}")
    } else {
        String::new()
    };
    let _ = writeln!(
        v,
        "        cred1 = n_credit_valid && n_credit_vc >= 4'd{vpc}{below_n};"
    );
    for i in 0..n {
        let _ = writeln!(v, "        pop_{i} = pop && cur == {vb}'d{i};");
    }
    // A VC may start when its FIFO holds a flit and its class's pool
    // holds a largest packet.
    let ready = |i: usize| format!("(cnt_{i} != {cw}'d0 && pool{} >= {pw}'d{m})", i / vpc);
    let _ = writeln!(v, "        any = 1'b0;");
    let _ = writeln!(v, "        pick = {vb}'d0;");
    let _ = writeln!(v, "        case (rr)");
    for s in 0..n {
        let mut chain = String::new();
        for k in 0..n {
            let c = (s + k) % n;
            let _ = write!(
                chain,
                "{}if {} begin any = 1'b1; pick = {vb}'d{c}; end",
                if k == 0 { "" } else { " else " },
                ready(c)
            );
        }
        let _ = writeln!(v, "            {vb}'d{s}: begin {chain} end");
    }
    if n < 1 << vb {
        let _ = writeln!(
            v,
            "            default: begin any = 1'b0; pick = {vb}'d0; end"
        );
    }
    let _ = writeln!(v, "        endcase");
    let _ = writeln!(v, "        start = !active && any;");
    let mut errs = vec![
        "(pop && first && !front[129])".to_string(),
        format!("(cred0 && pool0 == {pw}'d{r0})"),
        format!("(cred1 && pool1 == {pw}'d{r1})"),
    ];
    if n < 16 {
        errs.push(format!("(r_valid && r_vc >= 4'd{n})"));
        errs.push(format!("(n_credit_valid && n_credit_vc >= 4'd{n})"));
    }
    for i in 0..n {
        errs.push(format!("(push_{i} && !pop_{i} && cnt_{i} == {cw}'d{d})"));
    }
    let _ = writeln!(v, "        err = {};", errs.join(" || "));
    let _ = writeln!(v, "    end");
    // Sequential.
    let wrap = |x: String| format!("({x} == {aw}'d{} ? {aw}'d0 : {x} + {aw}'d1)", d - 1);
    let _ = writeln!(v, "    always @(posedge clock) begin");
    for i in 0..n {
        let _ = writeln!(
            v,
            "        if (push_{i}) mem_{i}[wp_{i}] <= {{r_head, r_tail, r_data}};"
        );
    }
    let _ = writeln!(v, "        if (reset) begin");
    for i in 0..n {
        let _ = writeln!(
            v,
            "            wp_{i} <= {aw}'d0; rp_{i} <= {aw}'d0; cnt_{i} <= {cw}'d0;"
        );
    }
    let _ = writeln!(
        v,
        "            active <= 1'b0; first <= 1'b0; cur <= {vb}'d0; rr <= {vb}'d0; pool0 <= {pw}'d{r0}; pool1 <= {pw}'d{r1};"
    );
    let _ = writeln!(
        v,
        "            r_credit_valid <= 1'b0; r_credit_vc <= 4'd0; n_valid <= 1'b0; n_data <= 128'd0; n_head <= 1'b0; n_tail <= 1'b0; n_vc <= 4'd0; errors <= 32'd0;"
    );
    let _ = writeln!(v, "        end else begin");
    for i in 0..n {
        let _ = writeln!(
            v,
            "            if (push_{i}) wp_{i} <= {};",
            wrap(format!("wp_{i}"))
        );
        let _ = writeln!(
            v,
            "            if (pop_{i}) rp_{i} <= {};",
            wrap(format!("rp_{i}"))
        );
        let _ = writeln!(
            v,
            "            if (push_{i} && !pop_{i}) cnt_{i} <= cnt_{i} + {cw}'d1;\n            else if (pop_{i} && !push_{i}) cnt_{i} <= cnt_{i} - {cw}'d1;"
        );
    }
    let rr_next = if n == 1 {
        format!("{vb}'d0")
    } else {
        format!("(pick == {vb}'d{} ? {vb}'d0 : pick + {vb}'d1)", n - 1)
    };
    let _ = writeln!(
        v,
        "            if (start) begin active <= 1'b1; first <= 1'b1; cur <= pick; rr <= {rr_next}; end\n            else if (pop) begin first <= 1'b0; if (front[128]) active <= 1'b0; end"
    );
    // A credit beyond its pool's size is an error and is dropped.
    for (c, rc) in rs.iter().enumerate() {
        let _ = writeln!(
            v,
            "            if (pop{c} && !cred{c}) pool{c} <= pool{c} - {pw}'d1;\n            else if (!pop{c} && cred{c} && pool{c} != {pw}'d{rc}) pool{c} <= pool{c} + {pw}'d1;"
        );
    }
    let _ = writeln!(
        v,
        "            n_valid <= pop; n_data <= front[127:0]; n_head <= front[129]; n_tail <= front[128]; n_vc <= {};",
        ext("cur")
    );
    let _ = writeln!(
        v,
        "            r_credit_valid <= pop; r_credit_vc <= {};",
        ext("cur")
    );
    let _ = writeln!(v, "            if (err) errors <= errors + 32'd1;");
    let _ = writeln!(v, "        end\n    end");
    let _ = writeln!(v, "endmodule // {name}");
    v
}

/// The top module text.
fn top_module(
    p: &NodePairParams,
    name: &str,
    ni: &str,
    net: &str,
    eject: &str,
    ports: &[PortDecl],
) -> String {
    let t = &p.router.topology;
    let nodes = t.num_nodes();
    let nports = t.num_ports();
    let exposed: Vec<&PortDecl> = ports
        .iter()
        .filter(|q| {
            !NET_PORTS.contains(&q.name.as_str())
                && !["clock", "reset", "node"].contains(&q.name.as_str())
        })
        .collect();
    let counters = ["dropped_packets", "flit_errors", "credit_errors"];
    let mut v = String::new();
    let _ = writeln!(
        v,
        "// {name}: {nodes} NIs `{ni}` on the local ports of the {}x{}x{} network `{net}`.",
        t.dims[0], t.dims[1], t.dims[2]
    );
    let _ = writeln!(v, "// Generated by exanet (hdl/src/node_pair.rs).");
    let mut decls: Vec<String> = vec!["input wire clock".into(), "input wire reset".into()];
    for n in 0..nodes {
        for q in &exposed {
            let dir = if q.input { "input" } else { "output" };
            decls.push(format!("{dir} wire {}n{n}_{}", range(q.width), q.name));
        }
        for s in ["tx", "rx"] {
            decls.push(format!("output wire n{n}_{s}_valid"));
            decls.push(format!("output wire [127:0] n{n}_{s}_data"));
            decls.push(format!("output wire n{n}_{s}_head"));
            decls.push(format!("output wire n{n}_{s}_tail"));
            decls.push(format!("output wire [3:0] n{n}_{s}_vc"));
        }
        decls.push(format!("output wire n{n}_rx_credit_valid"));
        decls.push(format!("output wire [31:0] n{n}_eject_errors"));
        for c in counters {
            for q in 0..nports {
                decls.push(format!("output wire [31:0] n{n}_{c}_{q}"));
            }
        }
    }
    let _ = writeln!(v, "module {name} (\n    {}\n);", decls.join(",\n    "));
    for n in 0..nodes {
        let _ = writeln!(
            v,
            "\n    // Node {n}: wires between NI, router and adapter."
        );
        for (w, wd) in [
            ("rx_credit_vc", 4),
            ("net_credit_valid", 1),
            ("net_credit_vc", 4),
            ("ej_valid", 1),
            ("ej_data", 128),
            ("ej_head", 1),
            ("ej_tail", 1),
            ("ej_vc", 4),
            ("ej_credit_valid", 1),
            ("ej_credit_vc", 4),
        ] {
            let _ = writeln!(v, "    wire {}n{n}_{w};", range(wd));
        }
    }
    // NIs.
    for n in 0..nodes {
        let c = t.coords(n);
        let me = Coords::new(c[0] as u8, c[1] as u8, c[2] as u8, 0)
            .expect("4-bit coordinates (checked by the router)")
            .to_bits();
        let mut conns: Vec<String> = vec![
            ".clock(clock)".into(),
            ".reset(reset)".into(),
            format!(".node(22'h{me:06x})"),
        ];
        for q in &exposed {
            conns.push(format!(".{0}(n{n}_{0})", q.name));
        }
        for (port, wire) in [
            ("out_valid", "tx_valid"),
            ("out_data", "tx_data"),
            ("out_head", "tx_head"),
            ("out_tail", "tx_tail"),
            ("out_vc", "tx_vc"),
            ("credit_in_valid", "net_credit_valid"),
            ("credit_in_vc", "net_credit_vc"),
            ("in_valid", "rx_valid"),
            ("in_data", "rx_data"),
            ("in_head", "rx_head"),
            ("in_tail", "rx_tail"),
            ("in_vc", "rx_vc"),
            ("credit_out_valid", "rx_credit_valid"),
            ("credit_out_vc", "rx_credit_vc"),
        ] {
            conns.push(format!(".{port}(n{n}_{wire})"));
        }
        let _ = writeln!(
            v,
            "\n    // NI of node {n} (x={}, y={}, z={}).\n    {ni} ni_n{n} (\n        {}\n    );",
            c[0],
            c[1],
            c[2],
            conns.join(",\n        ")
        );
        let _ = writeln!(
            v,
            "\n    {eject} eject_n{n} (\n        .clock(clock),\n        .reset(reset),\n        .r_valid(n{n}_ej_valid),\n        .r_data(n{n}_ej_data),\n        .r_head(n{n}_ej_head),\n        .r_tail(n{n}_ej_tail),\n        .r_vc(n{n}_ej_vc),\n        .r_credit_valid(n{n}_ej_credit_valid),\n        .r_credit_vc(n{n}_ej_credit_vc),\n        .n_valid(n{n}_rx_valid),\n        .n_data(n{n}_rx_data),\n        .n_head(n{n}_rx_head),\n        .n_tail(n{n}_rx_tail),\n        .n_vc(n{n}_rx_vc),\n        .n_credit_valid(n{n}_rx_credit_valid),\n        .n_credit_vc(n{n}_rx_credit_vc),\n        .errors(n{n}_eject_errors)\n    );"
        );
    }
    // Network.
    let mut conns: Vec<String> = vec![".clock(clock)".into(), ".reset(reset)".into()];
    for n in 0..nodes {
        for (port, wire) in [
            ("in_valid", "tx_valid"),
            ("in_data", "tx_data"),
            ("in_head", "tx_head"),
            ("in_tail", "tx_tail"),
            ("in_vc", "tx_vc"),
            ("credit_out_valid", "net_credit_valid"),
            ("credit_out_vc", "net_credit_vc"),
            ("out_valid", "ej_valid"),
            ("out_data", "ej_data"),
            ("out_head", "ej_head"),
            ("out_tail", "ej_tail"),
            ("out_vc", "ej_vc"),
            ("credit_in_valid", "ej_credit_valid"),
            ("credit_in_vc", "ej_credit_vc"),
        ] {
            conns.push(format!(".n{n}_l0_{port}(n{n}_{wire})"));
        }
        for c in counters {
            for q in 0..nports {
                conns.push(format!(".n{n}_{c}_{q}(n{n}_{c}_{q})"));
            }
        }
    }
    let _ = writeln!(
        v,
        "\n    // The network.\n    {net} network (\n        {}\n    );",
        conns.join(",\n        ")
    );
    let _ = writeln!(v, "endmodule // {name}");
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emit::assert_lint_clean;

    #[test]
    fn default_pair_lints_clean_and_wires_both_nis() {
        let p = NodePairParams::default();
        let e = emit_node_pair(&p).unwrap();
        assert_eq!(e.top, node_pair_top_name(&p));
        let top = &e.modules.last().unwrap().1;
        assert_eq!(
            top.matches(&format!("    {} ni_n", ni_top_name(&p.ni)))
                .count(),
            2
        );
        assert!(top.contains(".node(22'h"), "{top}");
        assert!(top.contains("output wire [31:0] n1_s_rdata"), "{top}");
        assert!(top.contains("output wire [41:0] n0_m_awaddr"), "{top}");
        assert!(top.contains(".n1_l0_in_valid(n1_tx_valid)"));
        assert!(top.contains(".in_valid(n1_rx_valid)"));
        assert!(
            !top.contains("n0_out_valid"),
            "network ports are not exposed"
        );
        assert_lint_clean(&e);
    }

    #[test]
    fn ports_are_parsed() {
        let t = "module m(a,b);\n    // Module arguments\n    input wire  [21:0] node;\n    output reg  s_awready;\n";
        let ports = module_ports(t).unwrap();
        assert_eq!(ports.len(), 2);
        assert_eq!(
            ports[0],
            PortDecl {
                input: true,
                width: 22,
                name: "node".into()
            }
        );
        assert!(!ports[1].input && ports[1].width == 1);
    }

    /// Verilog bench of the ejection adapter (default parameters: 4 VCs,
    /// 2 per class, 32-flit FIFOs; class-0 pool 64, class-1 pool 32, a
    /// largest packet 18 flits). Prints a line per checkpoint: flits
    /// forwarded of class 0 and 1, the error count, router credits.
    const EJECT_BENCH: &str = r#"
`timescale 1ns/1ps
module tb;
    reg clock = 0;
    always #5 clock = ~clock;
    reg reset = 1;
    reg r_valid = 0; reg [127:0] r_data = 0; reg r_head = 0; reg r_tail = 0; reg [3:0] r_vc = 0;
    wire r_credit_valid; wire [3:0] r_credit_vc;
    wire n_valid; wire [127:0] n_data; wire n_head; wire n_tail; wire [3:0] n_vc;
    reg n_credit_valid = 0; reg [3:0] n_credit_vc = 0;
    wire [31:0] errors;
    DUT dut (.clock(clock), .reset(reset), .r_valid(r_valid), .r_data(r_data),
        .r_head(r_head), .r_tail(r_tail), .r_vc(r_vc), .r_credit_valid(r_credit_valid),
        .r_credit_vc(r_credit_vc), .n_valid(n_valid), .n_data(n_data), .n_head(n_head),
        .n_tail(n_tail), .n_vc(n_vc), .n_credit_valid(n_credit_valid),
        .n_credit_vc(n_credit_vc), .errors(errors));
    integer f0 = 0, f1 = 0, rc = 0, bad = 0, k;
    reg in_pkt = 0; reg [3:0] pkt_vc = 0;
    always @(posedge clock) if (!reset) begin
        if (r_credit_valid) rc = rc + 1;
        if (n_valid) begin
            if (n_vc >= 4'd2) f1 = f1 + 1; else f0 = f0 + 1;
            if (n_data[127:124] != n_vc) bad = bad + 1;
            if (n_head) begin
                if (in_pkt) bad = bad + 1;
                in_pkt = !n_tail; pkt_vc = n_vc;
            end else begin
                if (!in_pkt || n_vc != pkt_vc) bad = bad + 1;
                if (n_tail) in_pkt = 0;
            end
        end
    end
    task push(input [3:0] vc, input integer len);
        integer i;
        begin
            for (i = 0; i < len; i = i + 1) begin
                @(negedge clock);
                r_valid = 1; r_vc = vc; r_head = (i == 0); r_tail = (i == len - 1);
                r_data = {vc, 124'd0} | i;
            end
            @(negedge clock);
            r_valid = 0;
        end
    endtask
    task credit(input [3:0] vc, input integer n);
        integer i;
        begin
            for (i = 0; i < n; i = i + 1) begin
                @(negedge clock); n_credit_valid = 1; n_credit_vc = vc;
            end
            @(negedge clock); n_credit_valid = 0;
        end
    endtask
    task show(input [7:0] tag);
        begin
            repeat (60) @(negedge clock);
            $display("%s %0d %0d %0d %0d", tag, f0, f1, errors, rc);
        end
    endtask
    initial begin
        repeat (3) @(negedge clock);
        reset = 0;
        push(0, 16); push(0, 16); push(1, 16); push(1, 16);
        show("A");
        push(2, 2);
        show("B");
        credit(3, 2);
        show("C");
        credit(2, 2);
        show("D");
        credit(1, 16);
        show("E");
        for (k = 0; k < 9; k = k + 1) push(3, 2);
        show("F");
        credit(2, 2);
        show("G");
        credit(4, 1);
        show("H");
        $display("BAD %0d", bad);
        $finish;
    end
endmodule
"#;

    /// The adapter's per-class credit pools, simulated with Icarus Verilog
    /// (skipped when it is not installed).
    #[test]
    fn eject_keeps_one_credit_pool_per_class() {
        let p = NodePairParams::default();
        assert_eq!(
            (
                p.router.num_vcs(),
                p.router.vcs_per_class,
                p.router.buffer_flits
            ),
            (4, 2, 32)
        );
        let rx = |f: fn(usize) -> usize| f(p.ni.ni.max_payload_bytes);
        assert_eq!(
            (
                rx(rx_buffer_flits),
                rx(rx_class1_flits),
                rx(rx_packet_flits)
            ),
            (64, 32, 18)
        );
        let dir = std::env::temp_dir().join(format!("exanet-eject-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("eject.v"), eject_module(&p, "DUT")).unwrap();
        std::fs::write(dir.join("tb.v"), EJECT_BENCH).unwrap();
        let built = std::process::Command::new("iverilog")
            .args(["-g2005", "-Wall", "-o", "sim", "tb.v", "eject.v"])
            .current_dir(&dir)
            .output();
        let Ok(built) = built else {
            println!("ignored: iverilog not installed; eject simulation skipped");
            return;
        };
        assert!(
            built.status.success(),
            "{}",
            String::from_utf8_lossy(&built.stderr)
        );
        let run = std::process::Command::new("vvp")
            .args(["-n", "sim"])
            .current_dir(&dir)
            .output()
            .unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        let out = String::from_utf8_lossy(&run.stdout).into_owned();
        let line = |tag: &str| -> Vec<u32> {
            let l = out
                .lines()
                .find(|l| l.trim_start().starts_with(&format!("{tag} ")))
                .unwrap_or_else(|| panic!("no line {tag} in:\n{out}"));
            l.split_whitespace()
                .skip(1)
                .map(|w| w.parse().unwrap())
                .collect()
        };
        // [class-0 flits, class-1 flits, errors, router credits]
        // A: three 16-flit class-0 packets leave (pool 0: 64 -> 16 < 18);
        // the fourth waits for class-0 credits.
        assert_eq!(line("A"), [48, 0, 0, 48], "{out}");
        // B: a class-1 packet passes the waiting class-0 packet.
        assert_eq!(line("B"), [48, 2, 0, 50], "{out}");
        // C: its two credits return on VC 3 (class 1): no error.
        assert_eq!(line("C"), [48, 2, 0, 50], "{out}");
        // D: two more class-1 credits are beyond the class-1 pool.
        assert_eq!(line("D"), [48, 2, 2, 50], "{out}");
        // E: 16 class-0 credits (on VC 1): the fourth packet leaves.
        assert_eq!(line("E"), [64, 2, 2, 66], "{out}");
        // F: nine 2-flit class-1 packets: eight leave (pool 1: 32 -> 16),
        // class-0 credits do not help class 1.
        assert_eq!(line("F"), [64, 18, 2, 82], "{out}");
        // G: two class-1 credits: the ninth leaves.
        assert_eq!(line("G"), [64, 20, 2, 84], "{out}");
        // H: a credit on VC 4 (no such VC) is an error.
        assert_eq!(line("H"), [64, 20, 3, 84], "{out}");
        assert_eq!(line("BAD"), [0], "packets whole, on their VC:\n{out}");
    }

    #[test]
    fn mismatched_parameters_are_errors() {
        let mut p = NodePairParams::default();
        p.ni.buffer_flits = 16;
        let e = emit_node_pair(&p).unwrap_err().to_string();
        assert!(e.contains("ni.buffer_flits"), "{e}");
        let mut p = NodePairParams::default();
        p.ni.vc = 4;
        assert!(emit_node_pair(&p)
            .unwrap_err()
            .to_string()
            .contains("ni.vc"));
        let mut p = NodePairParams::default();
        p.router.max_packet_flits = 10;
        let e = emit_node_pair(&p).unwrap_err().to_string();
        assert!(e.contains("max_packet_flits"), "{e}");
        // Message classes.
        let mut p = NodePairParams::default();
        p.router.classes = 1;
        let e = emit_node_pair(&p).unwrap_err().to_string();
        assert!(e.contains("router.classes = 1"), "{e}");
        let mut p = NodePairParams::default();
        p.router.vcs_per_class = 3;
        let e = emit_node_pair(&p).unwrap_err().to_string();
        assert!(
            e.contains("ni.vcs_per_class = 2") && e.contains("router.vcs_per_class = 3"),
            "{e}"
        );
        for (vc, resp_vc, key) in [
            (2, 2, "ni.vc = 2"),
            (0, 1, "ni.resp_vc = 1"),
            (0, 4, "ni.resp_vc = 4"),
        ] {
            let mut p = NodePairParams::default();
            (p.ni.vc, p.ni.resp_vc) = (vc, resp_vc);
            let e = emit_node_pair(&p).unwrap_err().to_string();
            assert!(e.contains(key), "{key}: {e}");
        }
        // Any class-0 / class-1 VC pair of the router is accepted.
        let mut p = NodePairParams::default();
        (p.ni.vc, p.ni.resp_vc) = (1, 3);
        p.validate().unwrap();
    }

    /// The adapter alone lints clean for 1, 3 and 8 VCs per class (2, 6
    /// and 16 VCs: VC index widths 1, 3 and 4) and a 64-byte payload.
    #[test]
    fn eject_lints_clean_for_other_vc_counts() {
        for (vpc, payload) in [(1, 256), (3, 64), (8, 256)] {
            let mut p = NodePairParams::default();
            p.router.vcs_per_class = vpc;
            p.ni.vcs_per_class = vpc;
            p.ni.resp_vc = vpc;
            p.ni.ni.max_payload_bytes = payload;
            p.validate().unwrap();
            let name = format!("eject_v{vpc}_p{payload}");
            let e = Emitted {
                top: name.clone(),
                modules: vec![(name.clone(), eject_module(&p, &name))],
            };
            assert_lint_clean(&e);
        }
    }

    #[test]
    fn default_uses_the_routers_classes() {
        let p = NodePairParams::default();
        assert_eq!(p.ni.vcs_per_class, p.router.vcs_per_class);
        assert_eq!((p.ni.vc, p.ni.resp_vc), (0, p.router.vcs_per_class));
        assert!(
            node_pair_top_name(&p).ends_with("_v0r2q2_t8"),
            "{}",
            node_pair_top_name(&p)
        );
    }
}
