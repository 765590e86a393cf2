# Stand-ins for the Vivado Tcl commands the generated scripts call, so a
# generated script can be *executed* by plain tclsh without Vivado (the
# test suite does: generators/tests/vivado_flow.rs).
#
# Each stub checks its options against the options UG835 (Vivado Design
# Suite Tcl Command Reference) documents for that command, and its count of
# positional arguments; an undocumented option, an option missing its value
# or a wrong argument count is an error naming the command and the option.
# A command with no stub is an error too (tclsh: invalid command name), as
# is an undefined variable. Every call is appended to the list
# ::stub::calls as {command arg...}, in call order.
#
# Knobs: ::stub::slack (the SLACK get_property returns, ns),
# ::stub::tmp (folder for files the stubs create, e.g. a BD wrapper).

namespace eval ::stub {
    variable calls {}
    # Block-design objects created so far: a get_bd_* of one not yet
    # created is an error, as in Vivado (where it returns nothing and the
    # command using it fails).
    variable bd_cells {}
    variable bd_ports {}
    variable slack 0.250
    variable tmp [file join [pwd] stub-tmp]
    # command -> {valued-options flag-options min-positional max-positional}
    # (max -1: no limit). -quiet and -verbose are accepted by every command.
    variable spec [dict create \
        create_project       {{-part -ip_repo_paths} {-in_memory -force} 0 2} \
        current_project      {{} {} 0 1} \
        close_project        {{} {-delete} 0 0} \
        set_property         {{-dict} {} 1 3} \
        get_property         {{-min -max -object} {} 2 2} \
        read_verilog         {{-library} {-sv} 1 1} \
        read_xdc             {{-ref -cells -mode} {-unmanaged} 1 1} \
        create_bd_design     {{-dir -cell -bdsource -boundary_from_container} {} 1 1} \
        create_bd_cell       {{-vlnv -type -reference} {} 1 1} \
        apply_bd_automation  {{-rule -config -opts -dict} {} 0 1} \
        get_bd_cells         {{-of_objects -filter} {-hierarchical -regexp -nocase} 0 1} \
        get_bd_pins          {{-of_objects -filter} {-hierarchical -regexp -nocase} 0 1} \
        get_bd_intf_pins     {{-of_objects -filter} {-hierarchical -regexp -nocase} 0 1} \
        get_bd_ports         {{-of_objects -filter} {-regexp -nocase} 0 1} \
        get_bd_intf_ports    {{-of_objects -filter} {-regexp -nocase} 0 1} \
        get_bd_addr_segs     {{-of_objects -filter} {-hierarchical -regexp -nocase -excluded} 0 1} \
        create_bd_port       {{-dir -from -to -type -freq_hz} {} 1 1} \
        create_bd_intf_port  {{-mode -vlnv} {} 1 1} \
        connect_bd_net       {{-boundary_type -net} {} 2 -1} \
        connect_bd_intf_net  {{-boundary_type -intf_net} {} 2 2} \
        assign_bd_address    {{-target_address_space -offset -range -external -dict -export_to_file -import_from_file} {-force -boundary -combine_segments -export_gui_to_file} 0 1} \
        validate_bd_design   {{-design} {-force} 0 0} \
        save_bd_design       {{} {} 0 1} \
        get_files            {{-of_objects -filter -compile_order -used_in} {-all -regexp -nocase} 0 1} \
        generate_target      {{} {-force} 2 2} \
        make_wrapper         {{-files -fileset} {-top -testbench -import -force} 0 0} \
        synth_design         {{-top -part -mode -flatten_hierarchy -directive -include_dirs -generic -verilog_define -fsm_extraction -max_dsp -max_bram} {-rtl -keep_equivalent_registers -resource_sharing -no_lc -no_srlextract} 0 0} \
        opt_design           {{-directive} {-retarget -propconst -sweep -bram_power_opt -remap -aggressive_remap -resynth_remap -shift_register_opt -debug_log} 0 0} \
        place_design         {{-directive -cell -unplace} {-no_timing_driven -timing_summary -no_bufg_opt -post_place_opt} 0 0} \
        phys_opt_design      {{-directive -critical_pin_opt} {-fanout_opt -placement_opt -routing_opt -rewire -critical_cell_opt -retime -hold_fix -aggressive_hold_fix -force_replication_on_nets} 0 0} \
        route_design         {{-directive -nets -pins} {-unroute -release_memory -no_timing_driven -preserve -delay -auto_delay -physical_nets -tns_cleanup} 0 0} \
        write_checkpoint     {{-cell} {-force -logic_function_stripped -encrypt -incremental_synth} 1 1} \
        report_utilization   {{-file -name -cells -pblocks -hierarchical_depth -slr} {-append -return_string -hierarchical -spreadsheet_file -no_primitives -omit_locs} 0 0} \
        report_timing_summary {{-file -name -max_paths -nworst -delay_type -check_timing_verbose -cells -rpx -datasheet -setup -hold} {-append -return_string -report_unconstrained -no_header -unique_pins -no_check_timing -no_detailed_paths -warn_on_violation} 0 0} \
        report_cdc           {{-from -to -cells -severity -file -name} {-details -summary -all_checks_per_endpoint -no_header -show_waiver -no_waiver -waived -append -return_string} 0 0} \
        get_timing_paths     {{-from -to -through -delay_type -max_paths -nworst -group -slack_lesser_than -slack_greater_than} {-setup -hold -unique_pins -sort_by} 0 0} \
        write_bitstream      {{-cell} {-force -bin_file -logic_location_file -mask_file -no_partial_bitfile -raw_bitfile -readback_file -reference_bitfile -no_binary_bitfile} 1 1} \
        write_hw_platform    {{-rp -rm} {-fixed -force -include_bit -include_sim_content -minimal -hw -hw_emu -static} 0 1} \
    ]
}

proc ::stub::check {cmd argv} {
    variable spec
    lassign [dict get $spec $cmd] valued flags minpos maxpos
    set positional {}
    set opts [dict create]
    for {set i 0} {$i < [llength $argv]} {incr i} {
        set a [lindex $argv $i]
        if {[string match -* $a] && ![string is double -strict $a]} {
            if {$a in {-quiet -verbose}} { continue }
            if {$a in $flags} { dict set opts $a 1; continue }
            if {$a in $valued} {
                incr i
                if {$i >= [llength $argv]} {
                    error "stub: $cmd: option $a needs a value"
                }
                dict set opts $a [lindex $argv $i]
                continue
            }
            error "stub: $cmd: option $a is not documented for $cmd (UG835 documents: [lsort [concat $valued $flags]] -quiet -verbose)"
        }
        lappend positional $a
    }
    set n [llength $positional]
    if {$n < $minpos || ($maxpos >= 0 && $n > $maxpos)} {
        error "stub: $cmd: $n positional argument(s) ($positional), documented [expr {$maxpos < 0 ? "at least $minpos" : "$minpos..$maxpos"}]"
    }
    return [list $opts $positional]
}

proc ::stub::call {cmd args} {
    variable calls
    lassign [check $cmd $args] opts positional
    lappend calls [concat [list $cmd] $args]
    switch -- $cmd {
        create_bd_cell {
            lappend ::stub::bd_cells [lindex $positional 0]
            if {[dict get $opts -type] ni {ip module hier container}} {
                error "stub: create_bd_cell: -type [dict get $opts -type] is not one of ip module hier container"
            }
        }
        create_bd_port - create_bd_intf_port {
            lappend ::stub::bd_ports [lindex $positional 0]
            if {[dict exists $opts -dir] && [dict get $opts -dir] ni {I O IO}} {
                error "stub: create_bd_port: -dir [dict get $opts -dir] is not one of I O IO"
            }
        }
        get_bd_cells - get_bd_pins - get_bd_intf_pins {
            set cell [lindex [split [lindex $positional 0] /] 0]
            if {$cell ni $::stub::bd_cells} {
                error "stub: $cmd [lindex $positional 0]: no block-design cell `$cell` (not created yet)"
            }
        }
        get_bd_ports - get_bd_intf_ports {
            if {[lindex $positional 0] ni $::stub::bd_ports} {
                error "stub: $cmd [lindex $positional 0]: no block-design port of that name (not created yet)"
            }
        }
        read_verilog - read_xdc {
            if {![file exists [lindex $positional 0]]} {
                error "stub: $cmd: no file [lindex $positional 0]"
            }
        }
        get_property {
            if {[lindex $positional 0] eq "SLACK"} { return $::stub::slack }
            return ""
        }
        make_wrapper {
            file mkdir $::stub::tmp
            set w [file join $::stub::tmp exanet_bd_wrapper.v]
            close [open $w w]
            return $w
        }
    }
    if {[llength $positional] == 1 && [string match get_* $cmd]} {
        return [lindex $positional 0]
    }
    return ""
}

foreach cmd [dict keys $::stub::spec] {
    proc ::$cmd args "::stub::call $cmd {*}\$args"
}
