//! Elaboration: the one step that turns a user [`Config`] into checked,
//! derived [`Params`]. Every rule on user input lives here; nothing
//! downstream re-checks or panics on a config value.
//!
//! A violation is a [`RuleError`] naming the key, its value and the rule;
//! [`crate::config::Loaded::elaborate`] prefixes it with the file position or
//! `-P` flag that set the key.

use crate::config::Config;
use anyhow::Result;
use exanet_hdl::limits;
use exanet_hdl::ni::NiRtlParams;
use exanet_sim::router::RouterParams as RouterModelParams;
use exanet_sim::router::VcSelect;
use exanet_sim::topology::Topology;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Bits per coordinate in the packet header (x, y, z are 4 bits each).
pub const COORD_BITS: u32 = 4;
/// Largest size of one dimension for hardware, from [`COORD_BITS`].
pub const MAX_DIM: u32 = 1 << COORD_BITS;

/// What a config is elaborated for. The per-key limits differ by target
/// (`exanet_hdl::limits::LIMITS`: dimensions up to 16 for hardware, 32 in
/// the simulator; buffers up to 256 flits for hardware, 1,024 in the
/// simulator, with a note), and so does a config with a network interface
/// and one message class (refused for hardware; the simulator has no NI,
/// so it leaves the NI out).
pub use exanet_hdl::limits::Target;
/// Bits of a packet header (and of a footer).
pub const HEADER_BITS: u32 = 128;
/// Bits of the header covered by SECDED (128-bit header minus its 16-bit ECC).
pub const HEADER_PROTECTED_BITS: u32 = 112;

/// A config value that breaks a rule (the type `exanet_hdl::limits` checks
/// with, so every rule's error is one type).
pub use exanet_hdl::limits::RuleError;

/// A [`RuleError`] as an error: `key = value: rule`.
pub(crate) fn rule(
    key: impl Into<String>,
    value: impl fmt::Display,
    rule: impl Into<String>,
) -> anyhow::Error {
    anyhow::Error::new(RuleError {
        key: key.into(),
        value: value.to_string(),
        rule: rule.into(),
    })
}

/// The checked configuration with every derived value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Params {
    /// Config name.
    pub name: String,
    /// Network shape.
    pub topology: TopologyParams,
    /// Packet and flit sizes.
    pub packet: PacketParams,
    /// The router: the golden model's parameters, which are the router
    /// RTL's too (`exanet_hdl::router::top::emit_router` takes them).
    pub router: RouterModelParams,
    /// Clock.
    pub clock: ClockParams,
    /// Link timing in clock cycles.
    pub link: LinkParams,
    /// Target device.
    pub fpga: FpgaParams,
    /// The network interface RTL's parameters (with the golden model's
    /// inside), derived from the keys above as [`NiRtlParams::derive`] says; `None`
    /// when this config's packet format is one the NI RTL does not support
    /// (a note in [`Self::notes`] says why).
    pub ni: Option<NiRtlParams>,
    /// Remarks that are not errors (e.g. a buffer too small for full link rate).
    pub notes: Vec<String>,
}

/// Derived topology values.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TopologyParams {
    /// Routers per dimension, `[x, y, z]`.
    pub dims: [u32; 3],
    /// Torus (true) or mesh per dimension.
    pub wrap: [bool; 3],
    /// Routing order as given (`"zyx"`).
    pub dim_order: String,
    /// Routing order as axis indices (x = 0, y = 1, z = 2), first routed first.
    pub route_axes: [usize; 3],
    /// Routers in the network.
    pub nodes: u32,
    /// Any dimension is a torus.
    pub any_torus: bool,
    /// Bits per coordinate in headers.
    pub coord_bits: u32,
    /// NI ports per router.
    pub local_ports: u32,
    /// Network ports per router: two per dimension larger than 1.
    pub network_ports: u32,
}

/// Derived packet values.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PacketParams {
    /// Data bits per flit.
    pub flit_bits: u32,
    /// Largest payload, bytes.
    pub max_payload_bytes: u32,
    /// Flits of the 128-bit header, and of the footer (2 with 64-bit flits, else 1).
    pub header_flits: u32,
    /// Payload flits of the largest packet.
    pub max_payload_flits: u32,
    /// Header + payload + footer flits of the largest packet.
    pub max_packet_flits: u32,
    /// Header bits protected by SECDED.
    pub header_protected_bits: u32,
}

/// Derived clock values.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClockParams {
    /// Frequency, MHz.
    pub pl_mhz: f64,
    /// Period, ns.
    pub period_ns: f64,
}

/// Derived link values.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LinkParams {
    /// Data rate, Gb/s.
    pub gbps: f64,
    /// One-way latency, ns.
    pub latency_ns: f64,
    /// One-way latency in clock cycles, rounded up.
    pub latency_cycles: u32,
    /// Clock cycles to serialize one flit's data bits at the link rate.
    pub cycles_per_flit: f64,
    /// [`Self::cycles_per_flit`] rounded up: the link accepts one flit every this many cycles.
    pub cycles_per_flit_ceil: u32,
    /// Credit round trip (flit out + credit back), cycles.
    pub credit_round_trip_cycles: u32,
    /// Flits one VC must buffer to keep the link busy over a credit round trip.
    pub full_rate_buffer_flits: u32,
}

pub use exanet_hdl::ni::geometry::NI_FLIT_BITS;

/// Target device.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FpgaParams {
    /// Vivado part.
    pub part: String,
    /// The transceiver of the node flow's links (`fpga.transceiver`).
    pub transceiver: Transceiver,
}

/// What carries each link between FPGAs in the node flow
/// (`fpga.transceiver`; wiring and cost in [`exanet_hdl::transceiver`]).
pub use exanet_hdl::transceiver::Transceiver;

/// Parse `fpga.transceiver`; an error names the key, the value and the
/// accepted values.
pub fn parse_transceiver(text: &str) -> Result<Transceiver> {
    match text {
        "gth" => Ok(Transceiver::Gth),
        "aurora" => Ok(Transceiver::Aurora),
        _ => Err(rule(
            "fpga.transceiver",
            format!("{text:?}"),
            "must be \"gth\" (raw GTH channel in 64B/66B mode + pcs66) or \"aurora\" \
             (Aurora 64B/66B core, framing mode)",
        )),
    }
}

/// `x` rounded up, tolerant of floating-point noise (2.0000000001 → 2).
fn ceil_u32(x: f64) -> u32 {
    (x - 1e-9).ceil().max(0.0) as u32
}

impl crate::config::Loaded {
    /// Elaborate the config for hardware; a rule violation is prefixed with
    /// the position (file:line:col, or the `-P` flag) of the offending key.
    pub fn elaborate(&self) -> Result<Params> {
        elaborate(&self.config).map_err(|e| self.locate(e))
    }
}

/// Check every key of `c` that has a row in the hardware-limits table
/// (`exanet_hdl::limits::LIMITS`) against that row for `target`, in one
/// pass over the config's own serde form: a key added to a config section
/// with a limit row is checked without code here. A violation is a
/// [`RuleError`]; a value only the simulator takes adds a note.
fn check_limits(c: &Config, target: Target, notes: &mut Vec<String>) -> Result<()> {
    let tree = serde_json::to_value(c)?;
    for row in limits::LIMITS {
        let Some(value) = row.key.split('.').try_fold(&tree, |v, field| v.get(field)) else {
            continue;
        };
        let items: Vec<(String, &serde_json::Value)> = match value {
            serde_json::Value::Array(a) => a
                .iter()
                .enumerate()
                .map(|(i, v)| (format!("{}[{i}]", row.key), v))
                .collect(),
            v => vec![(row.key.to_string(), v)],
        };
        for (key, v) in items {
            let n = v.as_u64().ok_or_else(|| {
                rule(
                    &key,
                    v,
                    "must be a whole number (a hardware limit row covers it)",
                )
            })?;
            match limits::check(&key, n, target).map_err(anyhow::Error::new)? {
                limits::Verdict::Ok => {}
                limits::Verdict::SimulationOnly(note) => notes.push(note),
            }
        }
    }
    Ok(())
}

/// Check every rule on `c` for hardware and derive [`Params`]; the first
/// violation is a [`RuleError`].
pub fn elaborate(c: &Config) -> Result<Params> {
    elaborate_for(c, Target::Hardware)
}

/// [`elaborate`] for `target`: [`Target::Simulation`] accepts dimensions up to
/// 32 (with 5-bit coordinates; `exanet_hdl::limits::LIMITS`), everything else is the same.
///
/// Phases: the name; the per-key limits (one table); then each section,
/// each phase deriving its block's parameters and checking the rules that
/// join keys; last the deadlock freedom of the whole.
pub fn elaborate_for(c: &Config, target: Target) -> Result<Params> {
    check_name(&c.name)?;
    let mut notes = Vec::new();
    check_limits(c, target, &mut notes)?;
    let topology = topology_of(&c.topology)?;
    let packet = packet_of(&c.packet);
    let router = router_of(c, &topology, &packet)?;
    let (clock, link) = timing_of(c, &mut notes)?;
    framed_links(c, &router, &link, 0, &mut notes)?;
    check_part(&c.fpga.part)?;
    let transceiver = parse_transceiver(&c.fpga.transceiver)?;
    let ni = ni_of(c, target, &packet, &router, &mut notes)?;
    let params = Params {
        name: c.name.clone(),
        topology,
        packet,
        router,
        clock,
        link,
        fpga: FpgaParams {
            part: c.fpga.part.clone(),
            transceiver,
        },
        ni,
        notes,
    };
    check_deadlock_freedom(&params)?;
    Ok(params)
}

/// `name`: a file-name-safe word (it names generated files and modules).
fn check_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name
            .chars()
            .all(|ch| ch.is_ascii_alphanumeric() || "_-.".contains(ch));
    if ok {
        Ok(())
    } else {
        Err(rule(
            "name",
            format!("{name:?}"),
            "must be non-empty and use only letters, digits, `_`, `-`, `.`",
        ))
    }
}

/// `[topology]`: shape, wrap flags (a size-1 dimension has no ring to
/// wrap) and routing order.
fn topology_of(t: &crate::config::Topology) -> Result<TopologyParams> {
    let dims: [u32; 3] = t.dims.as_slice().try_into().map_err(|_| {
        rule(
            "topology.dims",
            format!("{:?}", t.dims),
            "must list exactly 3 sizes [x, y, z]",
        )
    })?;
    let wrap: [bool; 3] = t.wrap.as_slice().try_into().map_err(|_| {
        rule(
            "topology.wrap",
            format!("{:?}", t.wrap),
            "must list exactly 3 flags [x, y, z]",
        )
    })?;
    for (i, &d) in dims.iter().enumerate() {
        if wrap[i] && d == 1 {
            return Err(rule(
                format!("topology.wrap[{i}]"),
                true,
                format!(
                    "dimension {} has size 1 (topology.dims[{i}] = 1) and so no links to wrap; \
                     set wrap[{i}] = false",
                    AXES[i]
                ),
            ));
        }
    }
    use exanet_sim::router::route_compute::{parse_dim_order, DIM_ORDER_RULE};
    let route_axes = parse_dim_order(&t.dim_order).map_err(|_| {
        rule(
            "topology.dim_order",
            format!("{:?}", t.dim_order),
            DIM_ORDER_RULE,
        )
    })?;
    let topo = sim_topology(dims, wrap, t.local_ports)?;
    Ok(TopologyParams {
        dims,
        wrap,
        dim_order: t.dim_order.clone(),
        route_axes,
        nodes: dims.iter().product(),
        any_torus: wrap.iter().any(|&w| w),
        coord_bits: if dims.iter().any(|&d| d > MAX_DIM) {
            COORD_BITS + 1
        } else {
            COORD_BITS
        },
        local_ports: t.local_ports,
        network_ports: topo.num_dir_ports() as u32,
    })
}

/// `[packet]`: flits of the header, the payload and the largest packet.
fn packet_of(p: &crate::config::Packet) -> PacketParams {
    let header_flits = HEADER_BITS.div_ceil(p.flit_bits);
    let max_payload_flits = (p.max_payload_bytes * 8).div_ceil(p.flit_bits);
    PacketParams {
        flit_bits: p.flit_bits,
        max_payload_bytes: p.max_payload_bytes,
        header_flits,
        max_payload_flits,
        max_packet_flits: 2 * header_flits + max_payload_flits,
        header_protected_bits: HEADER_PROTECTED_BITS,
    }
}

/// `[router]`: the golden router's parameters (the RTL's too); a VC
/// buffer must hold one largest packet (virtual cut-through).
fn router_of(c: &Config, t: &TopologyParams, p: &PacketParams) -> Result<RouterModelParams> {
    let r = &c.router;
    if r.buffer_flits < p.max_packet_flits {
        return Err(rule(
            "router.buffer_flits",
            r.buffer_flits,
            format!(
                "must hold one maximum packet under virtual cut-through: >= {} \
                 ({}-flit header + {} payload flits of {} bits + {}-flit footer, \
                 packet.flit_bits = {} and packet.max_payload_bytes = {})",
                p.max_packet_flits,
                p.header_flits,
                p.max_payload_flits,
                p.flit_bits,
                p.header_flits,
                p.flit_bits,
                p.max_payload_bytes
            ),
        ));
    }
    let rp = RouterModelParams::from_keys(
        r,
        sim_topology(t.dims, t.wrap, t.local_ports)?,
        t.route_axes,
        p.flit_bits as usize,
        p.max_packet_flits as usize,
    )
    .map_err(|e| rule(e.key, format!("{:?}", e.value), e.to_string()))?;
    rp.validate()
        .map_err(|e| crate::error::usage(format!("router model rejects this config: {e:#}")))?;
    Ok(rp)
}

/// `[clock]` and `[link]`: the period, and the link in clock cycles (with a
/// note when one VC's buffer cannot cover the credit round trip).
fn timing_of(c: &Config, notes: &mut Vec<String>) -> Result<(ClockParams, LinkParams)> {
    let pl_mhz = c.clock.pl_mhz;
    if !(pl_mhz > 0.0 && pl_mhz <= 1000.0) {
        return Err(rule("clock.pl_mhz", pl_mhz, "must be in (0, 1000]"));
    }
    let l = &c.link;
    if !(l.gbps > 0.0 && l.gbps.is_finite()) {
        return Err(rule("link.gbps", l.gbps, "must be a positive number"));
    }
    if !(l.latency_ns >= 0.0 && l.latency_ns.is_finite()) {
        return Err(rule("link.latency_ns", l.latency_ns, "must be >= 0"));
    }
    let period_ns = 1000.0 / pl_mhz;
    // Bounded before any cycle arithmetic (a latency of 1e59 ns overflowed
    // the credit round trip): the simulator and the link models take up to
    // MAX_LINK_LATENCY cycles.
    let max_latency = exanet_sim::network::params::MAX_LINK_LATENCY;
    if l.latency_ns / period_ns > max_latency as f64 {
        return Err(rule(
            "link.latency_ns",
            l.latency_ns,
            format!(
                "is {:.0} cycles at clock.pl_mhz = {pl_mhz}; at most {max_latency} cycles",
                (l.latency_ns / period_ns).ceil()
            ),
        ));
    }
    let latency_cycles = ceil_u32(l.latency_ns / period_ns);
    let cycles_per_flit = f64::from(c.packet.flit_bits) / l.gbps / period_ns;
    if cycles_per_flit > 1e6 {
        return Err(rule(
            "link.gbps",
            l.gbps,
            format!(
                "is too slow: one {}-bit flit would take {cycles_per_flit:.0} cycles (at most 1,000,000)",
                c.packet.flit_bits
            ),
        ));
    }
    let cycles_per_flit_ceil = ceil_u32(cycles_per_flit).max(1);
    let credit_round_trip_cycles = 2 * latency_cycles + 2 * cycles_per_flit_ceil;
    let full_rate_buffer_flits = credit_round_trip_cycles.div_ceil(cycles_per_flit_ceil);
    if c.router.buffer_flits < full_rate_buffer_flits {
        notes.push(format!(
            "router.buffer_flits = {} is below the {full_rate_buffer_flits} flits one VC needs \
             to keep a link busy over its {credit_round_trip_cycles}-cycle credit round trip; \
             a single VC will not reach the full link rate",
            c.router.buffer_flits
        ));
    }
    let link = LinkParams {
        gbps: l.gbps,
        latency_ns: l.latency_ns,
        latency_cycles,
        cycles_per_flit,
        cycles_per_flit_ceil,
        credit_round_trip_cycles,
        full_rate_buffer_flits,
    };
    Ok((ClockParams { pl_mhz, period_ns }, link))
}

/// `[link]`'s link-layer keys: the simulator's framed links (`None` for
/// `link.model = "ideal"`), with PHY seeds derived from `seed`; a note when
/// `link.gbps` is more than the PHY's 64 bits per cycle.
pub fn framed_links(
    c: &Config,
    router: &RouterModelParams,
    link: &LinkParams,
    seed: u64,
    notes: &mut Vec<String>,
) -> Result<Option<exanet_sim::network::FramedLinks>> {
    if c.link.model == "framed" && router.num_vcs() > exanet_sim::link::MAX_VCS {
        return Err(rule(
            "router.vcs_per_class",
            c.router.vcs_per_class,
            format!(
                "router.classes x router.vcs_per_class = {} VCs, but a framed link carries at most {} \
                 (3-bit VC field of a frame trailer); lower it or set link.model = \"ideal\"",
                router.num_vcs(),
                exanet_sim::link::MAX_VCS
            ),
        ));
    }
    // The PHY model counts the latency in cycles (1..=MAX_LINK_LATENCY); the
    // user set nanoseconds, so the error names that key, not the cycles.
    let max = exanet_sim::network::params::MAX_LINK_LATENCY;
    if c.link.model == "framed" && !(1..=max).contains(&(link.latency_cycles as usize)) {
        return Err(rule(
            "link.latency_ns",
            c.link.latency_ns,
            format!(
                "is {} cycles at clock.pl_mhz = {}; a framed link needs 1..={max} cycles",
                link.latency_cycles, c.clock.pl_mhz
            ),
        ));
    }
    let f = exanet_sim::network::FramedLinks::from_keys(
        &c.link,
        router.flit_bits,
        router.num_vcs(),
        router.buffer_flits,
        link.latency_cycles as usize,
        c.clock.pl_mhz,
        router.topology.num_nodes(),
        seed,
    )
    .map_err(|e| rule(e.key, e.value, e.rule))?;
    let phy_gbps = c.clock.pl_mhz * 64.0 / 1000.0;
    if f.is_some() && c.link.gbps > phy_gbps + 1e-9 {
        notes.push(format!(
            "link.gbps = {} is more than the PHY's 64 bits per cycle at clock.pl_mhz = {} \
             ({phy_gbps} Gb/s): the framed links run at {phy_gbps} Gb/s",
            c.link.gbps, c.clock.pl_mhz
        ));
    }
    Ok(f)
}

/// `[ni]`: its keys' cross rules (checked even when no NI is generated: a
/// bad value is a config mistake either way), then the NI of this config,
/// or a note saying why there is none.
fn ni_of(
    c: &Config,
    target: Target,
    packet: &PacketParams,
    router: &RouterModelParams,
    notes: &mut Vec<String>,
) -> Result<Option<NiRtlParams>> {
    let vpc = c.router.vcs_per_class;
    if c.ni.resp_vc != 0 && !(vpc..2 * vpc).contains(&c.ni.resp_vc) {
        return Err(rule(
            "ni.resp_vc",
            c.ni.resp_vc,
            format!(
                "must be 0 (the first class-1 VC, router.vcs_per_class = {vpc}) or a class-1 VC \
                 in {vpc}..={} (the NI's control responses travel in class 1)",
                2 * vpc - 1
            ),
        ));
    }
    let classes = c.router.classes;
    match NiRtlParams::derive(
        &c.ni,
        packet.flit_bits,
        packet.max_payload_bytes,
        router.buffer_flits,
        router.vcs_per_class,
    ) {
        // The NI keeps its control responses in class 1 and its requests
        // in class 0; with one class they could wait on each other
        // (protocol deadlock). The network simulator has no NI.
        Ok(_) if classes != 2 && target == Target::Hardware => Err(rule(
            "router.classes",
            classes,
            format!(
                "must be 2 with a network interface (generated for packet.flit_bits = \
                 {NI_FLIT_BITS}): the NI sends control responses in class 1 and requests in \
                 class 0, so that neither waits behind the other (one class can deadlock)"
            ),
        )),
        Ok(_) if router.vc_select == VcSelect::Free && target == Target::Hardware => Err(rule(
            "router.vc_select",
            "\"free\"",
            format!(
                "must be \"flow\" with a network interface (generated for packet.flit_bits = \
                 {NI_FLIT_BITS}): a free VC choice lets a later packet of a transfer overtake \
                 an earlier one, and the NI completes a transfer when its last packet lands"
            ),
        )),
        Ok(_) if classes != 2 => {
            notes.push(format!(
                "ni: not generated: router.classes = {classes} (the NI needs 2 message classes)"
            ));
            Ok(None)
        }
        Ok(ni) => {
            let want = packet.max_payload_bytes as usize;
            if ni.ni.max_payload_bytes != want {
                notes.push(format!(
                    "ni: packet.max_payload_bytes = {want} is not an NI payload size \
                     (16, 32, 64, 128, 256); the NI sends packets of up to {} bytes",
                    ni.ni.max_payload_bytes
                ));
            }
            Ok(Some(ni))
        }
        Err(why) => {
            notes.push(why);
            Ok(None)
        }
    }
}

const AXES: [char; 3] = ['x', 'y', 'z'];

/// The resource tables and XDC assume a ZU9EG: `xczu9eg-<package>-<speed>-<temp>`.
fn check_part(part: &str) -> Result<()> {
    let fields: Vec<&str> = part.split('-').collect();
    let ok = fields.len() == 4
        && fields[0] == "xczu9eg"
        && fields[1..]
            .iter()
            .all(|f| !f.is_empty() && f.chars().all(|c| c.is_ascii_alphanumeric()));
    if ok {
        Ok(())
    } else {
        Err(rule(
            "fpga.part",
            format!("{part:?}"),
            "must be a ZU9EG part `xczu9eg-<package>-<speed>-<temp>`, e.g. \"xczu9eg-ffvb1156-2-e\"",
        ))
    }
}

fn sim_topology(dims: [u32; 3], wrap: [bool; 3], local_ports: u32) -> Result<Topology> {
    Topology::new(dims.map(|d| d as usize), wrap, local_ports as usize)
        .map_err(|e| rule("topology", format!("{dims:?}"), format!("{e:#}")))
}

impl Params {
    /// Port names in port order (`x+`, `x-`, …, `l0`, …), as in
    /// `exanet_sim::topology`.
    pub fn port_names(&self) -> Vec<String> {
        let t = &self.router.topology;
        (0..t.num_ports()).map(|i| t.port_name(i)).collect()
    }
}

/// Deadlock freedom of the routing on this topology.
///
/// First the dateline rule, for its plain message: a torus ring under
/// dimension-order routing has a cyclic channel dependency unless packets
/// switch VC at the wrap link, which needs at least 2 VCs per class. Then the
/// full channel-dependency-graph check of the golden router's own route
/// compute (`exanet_sim::deadlock`), which covers every other way a config
/// could deadlock.
fn check_deadlock_freedom(p: &Params) -> Result<()> {
    if p.topology.any_torus && p.router.vcs_per_class < 2 {
        let torus: Vec<String> = (0..3)
            .filter(|&i| p.topology.wrap[i])
            .map(|i| AXES[i].to_string())
            .collect();
        return Err(rule(
            "router.vcs_per_class",
            p.router.vcs_per_class,
            format!(
                "must be >= 2 because dimension(s) {} are a torus (wrap = true): \
                 dateline deadlock avoidance needs 2 VCs per class",
                torus.join(", ")
            ),
        ));
    }
    if let Some(cycle) = exanet_sim::deadlock::find_cycle(&p.router) {
        const SHOWN: usize = 6;
        let mut path: Vec<String> = cycle.iter().take(SHOWN).map(|c| c.to_string()).collect();
        if cycle.len() > SHOWN {
            path.push(format!("... ({} more)", cycle.len() - SHOWN));
        }
        return Err(rule(
            "router.vcs_per_class",
            p.router.vcs_per_class,
            format!(
                "routing can deadlock with this topology, dim_order and VC count: cyclic \
                 channel dependency through {} channels: {}",
                cycle.len(),
                path.join(" -> ")
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use exanet_sim::router::{Dateline, TieBreak};

    fn with(f: impl FnOnce(&mut Config)) -> Result<Params> {
        let mut c = Config::default();
        f(&mut c);
        elaborate(&c)
    }

    fn rule_of(r: Result<Params>) -> RuleError {
        r.unwrap_err().downcast::<RuleError>().unwrap()
    }

    /// `router.counter_bits` out of range: the router model's error, naming key, value and range.
    #[test]
    fn counter_bits_out_of_range_names_key_and_range() {
        for (v, text) in [
            (0, "router.counter_bits = 0"),
            (40, "router.counter_bits = 40"),
        ] {
            let e = format!("{:#}", with(|c| c.router.counter_bits = v).unwrap_err());
            assert!(e.contains(text) && e.contains("1..=32"), "{e}");
        }
        assert_eq!(
            with(|c| c.router.counter_bits = 32)
                .unwrap()
                .router
                .counter_bits,
            32
        );
    }

    #[test]
    fn default_derives_exanest_values() {
        let p = elaborate(&Config::default()).unwrap();
        assert_eq!(p.topology.nodes, 128);
        assert_eq!(p.topology.route_axes, [2, 1, 0]);
        assert_eq!(p.router.topology.num_ports(), 7);
        assert_eq!(p.port_names()[0], "x+");
        assert_eq!(p.port_names()[5], "z-");
        assert_eq!(p.port_names()[6], "l0");
        assert_eq!(p.packet.header_flits, 1);
        assert_eq!(p.packet.max_payload_flits, 16);
        assert_eq!(p.packet.max_packet_flits, 18);
        assert_eq!(p.router.num_vcs(), 4);
        assert!((p.clock.period_ns - 6.4).abs() < 1e-12);
        assert_eq!(p.link.latency_cycles, 16); // 100 ns / 6.4 ns = 15.6
        assert_eq!(p.link.cycles_per_flit_ceil, 2); // 128 b / 10 Gb/s = 12.8 ns
        assert_eq!(p.link.credit_round_trip_cycles, 36);
        assert_eq!(p.link.full_rate_buffer_flits, 18);
        assert!(p.notes.is_empty(), "{:?}", p.notes);
    }

    #[test]
    fn each_rule_names_key_value_and_rule() {
        type Case = (Box<dyn FnOnce(&mut Config)>, &'static str, &'static str);
        let cases: Vec<Case> = vec![
            (
                Box::new(|c| c.topology.dims = vec![17, 4, 4]),
                "topology.dims[0]",
                "1..=16",
            ),
            (
                Box::new(|c| c.topology.dims = vec![0, 4, 4]),
                "topology.dims[0]",
                "1..=16",
            ),
            (
                Box::new(|c| c.topology.dims = vec![4, 4]),
                "topology.dims",
                "exactly 3",
            ),
            (
                Box::new(|c| c.topology.dims = vec![4, 4, 1]),
                "topology.wrap[2]",
                "size 1",
            ),
            (
                Box::new(|c| c.topology.dim_order = "zzx".into()),
                "topology.dim_order",
                "permutation",
            ),
            (
                Box::new(|c| c.topology.dim_order = "xy".into()),
                "topology.dim_order",
                "permutation",
            ),
            (
                Box::new(|c| c.topology.local_ports = 5),
                "topology.local_ports",
                "1..=4",
            ),
            (
                Box::new(|c| c.packet.flit_bits = 100),
                "packet.flit_bits",
                "64, 128, 256",
            ),
            (
                Box::new(|c| c.packet.max_payload_bytes = 260),
                "packet.max_payload_bytes",
                "8..=256",
            ),
            (
                Box::new(|c| c.packet.max_payload_bytes = 12),
                "packet.max_payload_bytes",
                "multiple of 8",
            ),
            (
                Box::new(|c| c.router.classes = 3),
                "router.classes",
                "1..=2",
            ),
            (
                Box::new(|c| c.router.vcs_per_class = 9),
                "router.vcs_per_class",
                "1..=8",
            ),
            (
                Box::new(|c| c.router.vcs_per_class = 1),
                "router.vcs_per_class",
                "torus",
            ),
            (
                Box::new(|c| c.router.buffer_flits = 17),
                "router.buffer_flits",
                ">= 18",
            ),
            (
                Box::new(|c| c.router.dateline = "late".into()),
                "router.dateline",
                "one of \"wrap\", \"entry\"",
            ),
            (
                Box::new(|c| c.router.tie_break = "minus".into()),
                "router.tie_break",
                "one of \"plus\", \"parity\"",
            ),
            (
                Box::new(|c| c.router.vc_select = "any".into()),
                "router.vc_select",
                "one of \"flow\", \"free\"",
            ),
            (
                Box::new(|c| c.router.vc_select = "free".into()),
                "router.vc_select",
                "NI completes a transfer",
            ),
            (
                Box::new(|c| c.router.allocator = "greedy".into()),
                "router.allocator",
                "one of \"separable\", \"islip\", \"wavefront\"",
            ),
            (
                Box::new(|c| c.router.alloc_iterations = 5),
                "router.alloc_iterations",
                "1..=4",
            ),
            (
                Box::new(|c| c.clock.pl_mhz = 0.0),
                "clock.pl_mhz",
                "(0, 1000]",
            ),
            (
                Box::new(|c| c.clock.pl_mhz = 1000.5),
                "clock.pl_mhz",
                "(0, 1000]",
            ),
            (
                Box::new(|c| c.clock.pl_mhz = f64::NAN),
                "clock.pl_mhz",
                "(0, 1000]",
            ),
            (Box::new(|c| c.link.gbps = 0.0), "link.gbps", "positive"),
            (
                Box::new(|c| c.router.vcs_per_class = 5),
                "router.vcs_per_class",
                "a framed link carries at most 8",
            ),
            (Box::new(|c| c.link.ber = 0.1), "link.ber", "0..=1e-2"),
            (
                Box::new(|c| c.link.model = "lossy".into()),
                "link.model",
                "\"framed\", \"ideal\"",
            ),
            (
                Box::new(|c| c.link.down = vec![vec![10, 20], vec![15, 30]]),
                "link.down[1]",
                "not overlapping",
            ),
            (
                Box::new(|c| c.link.latency_ns = -1.0),
                "link.latency_ns",
                ">= 0",
            ),
            // found by config fuzzing: these overflowed the cycle arithmetic
            (
                Box::new(|c| c.link.latency_ns = 1e59),
                "link.latency_ns",
                "at most 4096 cycles",
            ),
            (Box::new(|c| c.link.gbps = 1e-300), "link.gbps", "too slow"),
            (
                Box::new(|c| c.link.latency_ns = 0.0),
                "link.latency_ns",
                "a framed link needs 1..=4096 cycles",
            ),
            (
                Box::new(|c| c.fpga.part = "xczu7ev-ffvc1156-2-e".into()),
                "fpga.part",
                "ZU9EG",
            ),
            (
                Box::new(|c| c.fpga.part = "xczu9eg".into()),
                "fpga.part",
                "ZU9EG",
            ),
            (
                Box::new(|c| c.fpga.transceiver = "gtx".into()),
                "fpga.transceiver",
                "must be \"gth\" (raw GTH channel in 64B/66B mode + pcs66) or \"aurora\"",
            ),
            (
                Box::new(|c| c.fpga.transceiver = "Aurora".into()),
                "fpga.transceiver",
                "Aurora 64B/66B core, framing mode",
            ),
            (Box::new(|c| c.name = "a b".into()), "name", "letters"),
            (
                Box::new(|c| c.ni.tx_ahead = 12),
                "ni.tx_ahead",
                "power of two in 2..=32",
            ),
            (
                Box::new(|c| c.ni.tx_ahead = 1),
                "ni.tx_ahead",
                "power of two in 2..=32",
            ),
            (
                Box::new(|c| c.ni.tx_ahead = 64),
                "ni.tx_ahead",
                "power of two in 2..=32",
            ),
            (
                Box::new(|c| c.router.classes = 1),
                "router.classes",
                "must be 2 with a network interface",
            ),
            (
                Box::new(|c| c.ni.resp_vc = 1),
                "ni.resp_vc",
                "class-1 VC in 2..=3",
            ),
            (
                Box::new(|c| c.ni.resp_vc = 4),
                "ni.resp_vc",
                "class-1 VC in 2..=3",
            ),
            (
                Box::new(|c| {
                    c.router.vcs_per_class = 3;
                    c.ni.resp_vc = 2;
                }),
                "ni.resp_vc",
                "class-1 VC in 3..=5",
            ),
        ];
        for (f, key, words) in cases {
            let r = rule_of(with(f));
            assert_eq!(r.key, key, "{r}");
            assert!(r.rule.contains(words), "{r}");
            assert!(!r.value.is_empty());
        }
    }

    /// The routing rules reach the router model; a free VC choice is for the
    /// network simulator (and routers without an NI), not with the NI.
    #[test]
    fn routing_rule_keys_reach_the_router() {
        let p = with(|c| {
            c.router.dateline = "wrap".into();
            c.router.tie_break = "plus".into();
        })
        .unwrap();
        assert_eq!(p.router.dateline, Dateline::Wrap);
        assert_eq!(p.router.tie_break, TieBreak::Plus);
        let d = Config::default();
        let p = elaborate(&d).unwrap();
        assert_eq!(
            (p.router.dateline, p.router.tie_break, p.router.vc_select),
            (Dateline::Entry, TieBreak::Parity, VcSelect::Flow)
        );
        assert_eq!(
            (p.router.allocator, p.router.alloc_iterations),
            (exanet_sim::router::Allocator::Separable, 2)
        );
        let p = with(|c| {
            c.router.allocator = "islip".into();
            c.router.alloc_iterations = 3;
        })
        .unwrap();
        assert_eq!(
            (p.router.allocator, p.router.alloc_iterations),
            (exanet_sim::router::Allocator::Islip, 3)
        );
        let mut c = Config::default();
        c.router.vc_select = "free".into();
        let p = elaborate_for(&c, Target::Simulation).unwrap();
        assert_eq!(p.router.vc_select, VcSelect::Free);
        c.packet.flit_bits = 256;
        c.router.buffer_flits = 16;
        assert!(elaborate(&c).unwrap().ni.is_none());
    }

    #[test]
    fn mesh_and_small_configs_elaborate() {
        let p = with(|c| {
            c.topology.dims = vec![4, 4, 1];
            c.topology.wrap = vec![false, false, false];
            c.router.vcs_per_class = 1;
        })
        .unwrap();
        assert_eq!(p.router.topology.num_ports(), 5);
        assert_eq!(p.topology.network_ports, 4);
        assert_eq!(p.router.num_vcs(), 2);
        // A 5-flit buffer: the simulator takes it (the RTL needs 9).
        let mut c = Config::default();
        c.packet.flit_bits = 64;
        c.packet.max_payload_bytes = 8;
        c.router.buffer_flits = 5;
        assert_eq!(rule_of(elaborate(&c)).key, "router.buffer_flits");
        let p = elaborate_for(&c, Target::Simulation).unwrap();
        // The 128-bit header and footer take two 64-bit flits each.
        assert_eq!(p.packet.header_flits, 2);
        assert_eq!(p.packet.max_packet_flits, 5);
        assert_eq!(
            p.packet.max_packet_flits as usize,
            p.router.clone().packet_flits(8),
            "same packet length as the golden router"
        );
        assert!(
            p.notes[0].contains("router.buffer_flits = 5"),
            "{:?}",
            p.notes
        );
        c.router.buffer_flits = 4;
        let r = rule_of(elaborate_for(&c, Target::Simulation));
        assert!(r.rule.contains(">= 5 (2-flit header"), "{r}");
    }

    #[test]
    fn deadlock_check_uses_the_golden_routers_channel_graph() {
        let p = elaborate(&Config::default()).unwrap();
        let mut rp = p.router.clone();
        assert_eq!(rp.packet_flits(256), 18);
        assert!(exanet_sim::deadlock::find_cycle(&rp).is_none());
        // What the dateline rule stops early, the full check would also find.
        rp.vcs_per_class = 1;
        assert!(exanet_sim::deadlock::find_cycle(&rp).is_some());
        // A mesh needs one VC per class.
        let p = with(|c| {
            c.topology.wrap = vec![false, false, false];
            c.router.vcs_per_class = 1;
        })
        .unwrap();
        assert!(exanet_sim::deadlock::find_cycle(&p.router.clone()).is_none());
    }

    #[test]
    fn simulation_accepts_dimensions_up_to_32_hardware_up_to_16() {
        let mut c = Config::default();
        c.topology.dims = vec![32, 32, 32];
        let r = rule_of(elaborate(&c));
        assert_eq!(r.key, "topology.dims[0]");
        assert!(r.rule.contains("1..=16 for hardware"), "{r}");
        assert!(r.rule.contains("takes 1..=32"), "{r}");
        let p = elaborate_for(&c, Target::Simulation).unwrap();
        assert_eq!(p.topology.nodes, 32 * 32 * 32);
        assert_eq!(p.topology.coord_bits, 5);
        assert_eq!(p.router.clone().topology.dims, [32, 32, 32]);
        c.topology.dims = vec![8, 33, 4];
        let r = rule_of(elaborate_for(&c, Target::Simulation));
        assert_eq!(r.key, "topology.dims[1]");
        assert!(r.rule.contains("1..=32 in simulation"), "{r}");
        c.topology.dims = vec![16, 4, 4];
        assert_eq!(elaborate(&c).unwrap().topology.coord_bits, 4);
    }

    #[test]
    fn ni_is_derived_from_packet_and_router_keys() {
        let p = elaborate(&Config::default()).unwrap();
        let ni = p.ni.as_ref().expect("the default config has an NI");
        assert_eq!(ni.ni.max_payload_bytes, 256);
        assert_eq!(ni.ni.mailbox_msg_bytes, 64);
        assert_eq!(ni.ni.addr_bits, 40);
        assert_eq!(ni.ni.channels, exanet_sim::ni::NiParams::default().channels);
        assert_eq!((ni.buffer_flits, ni.vc, ni.tx_ahead), (32, 0, 8));
        // Message classes: the router's VCs per class; responses on the
        // first class-1 VC unless ni.resp_vc names another.
        assert_eq!((ni.vcs_per_class, ni.resp_vc), (2, 2));
        let p = with(|c| c.router.vcs_per_class = 3).unwrap();
        let ni = p.ni.unwrap();
        assert_eq!((ni.vcs_per_class, ni.resp_vc), (3, 3));
        let p = with(|c| {
            c.router.vcs_per_class = 3;
            c.ni.resp_vc = 5;
        })
        .unwrap();
        assert_eq!(p.ni.unwrap().resp_vc, 5);
        // One class: refused for hardware when there is an NI; fine
        // without one, and for the simulator (which leaves the NI out).
        let r = rule_of(with(|c| c.router.classes = 1));
        assert_eq!((r.key.as_str(), r.value.as_str()), ("router.classes", "1"));
        let p = with(|c| {
            c.router.classes = 1;
            c.packet.flit_bits = 64;
            c.router.buffer_flits = 36;
        })
        .unwrap();
        assert!(p.ni.is_none());
        let mut one = Config::default();
        one.router.classes = 1;
        let p = elaborate_for(&one, Target::Simulation).unwrap();
        assert!(p.ni.is_none());
        assert!(
            p.notes.iter().any(|n| n.contains("router.classes = 1")),
            "{:?}",
            p.notes
        );
        // The read-ahead follows ni.tx_ahead; it is checked even without an NI.
        let p = with(|c| c.ni.tx_ahead = 32).unwrap();
        assert_eq!(p.ni.unwrap().tx_ahead, 32);
        let r = rule_of(with(|c| {
            c.packet.flit_bits = 64;
            c.router.buffer_flits = 36;
            c.ni.tx_ahead = 0;
        }));
        assert_eq!((r.key.as_str(), r.value.as_str()), ("ni.tx_ahead", "0"));
        // The router's local buffer follows router.buffer_flits.
        let p = with(|c| c.router.buffer_flits = 40).unwrap();
        assert_eq!(p.ni.unwrap().buffer_flits, 40);
        // A payload the NI cannot segment to: the next smaller NI size, noted.
        let p = with(|c| c.packet.max_payload_bytes = 200).unwrap();
        let ni = p.ni.as_ref().unwrap();
        assert_eq!(ni.ni.max_payload_bytes, 128);
        assert!(
            p.notes
                .iter()
                .any(|n| n.contains("packet.max_payload_bytes = 200") && n.contains("up to 128")),
            "{:?}",
            p.notes
        );
        let p = with(|c| c.packet.max_payload_bytes = 32).unwrap();
        let ni = p.ni.unwrap();
        assert_eq!((ni.ni.max_payload_bytes, ni.ni.mailbox_msg_bytes), (32, 32));
        // No NI for 64-bit flits or payloads below 16 bytes; a note says why.
        let p = with(|c| {
            c.packet.flit_bits = 64;
            c.router.buffer_flits = 36;
        })
        .unwrap();
        assert!(p.ni.is_none());
        assert!(
            p.notes
                .iter()
                .any(|n| n.contains("ni: not generated: packet.flit_bits = 64")),
            "{:?}",
            p.notes
        );
        let p = with(|c| c.packet.max_payload_bytes = 8).unwrap();
        assert!(p.ni.is_none());
        assert!(
            p.notes
                .iter()
                .any(|n| n.contains("ni: not generated: packet.max_payload_bytes = 8")),
            "{:?}",
            p.notes
        );
    }
}
