/* Names of C++ subprograms that have no linkage name in DWARF, qualified from the DIE
 * tree the way the demangler prints a mangled name. GCC gives a lambda's operator() no
 * DW_AT_linkage_name, so an inlined lambda was only `operator()`; here it becomes
 * `ns::run(int)::{lambda(int)#1}::operator()(int) const`, as `nm -C` shows the same
 * lambda when it is not inlined: the enclosing function's demangled name, the closure
 * numbered in its function in DIE order (GCC numbers a function's lambdas in order,
 * whatever their signatures), the parameter types printed from DWARF. */
#include "analyze/dwarf/dwarf-index.h"
#include "analyze/elf/procs.h"

#include "base/strbuf.h"
#include "base/xalloc.h"

#include <dwarf.h>
#include <string.h>

static int ref_attr(Dwarf_Die *die, int name, Dwarf_Die *out)
{
	Dwarf_Attribute attr;
	return dwarf_attr(die, name, &attr) && dwarf_formref_die(&attr, out);
}

static const char *own_name(Dwarf_Die *die)
{
	const char *s = dwarf_diename(die);
	return s && *s ? s : NULL;
}

static int is_class(int tag)
{
	return tag == DW_TAG_class_type || tag == DW_TAG_structure_type || tag == DW_TAG_union_type;
}

static void type_name(Dwarf_Die *type, struct strbuf *sb, int depth);

/* A GCC closure type: unnamed, with a member function named operator(). */
static int is_lambda(Dwarf_Die *cls)
{
	Dwarf_Die child;
	if (own_name(cls) || dwarf_child(cls, &child))
		return 0;
	do {
		const char *n = own_name(&child);
		if (dwarf_tag(&child) == DW_TAG_subprogram && n && !strcmp(n, "operator()"))
			return 1;
	} while (!dwarf_siblingof(&child, &child));
	return 0;
}

/* The member operator() of a closure type. */
static int lambda_call(Dwarf_Die *cls, Dwarf_Die *out)
{
	if (dwarf_child(cls, out))
		return 0;
	do {
		const char *n = own_name(out);
		if (dwarf_tag(out) == DW_TAG_subprogram && n && !strcmp(n, "operator()"))
			return 1;
	} while (!dwarf_siblingof(out, out));
	return 0;
}

/* "(T1, T2)" from the non-artificial formal parameters of a subprogram DIE. */
static void param_list(Dwarf_Die *sub, struct strbuf *sb, int depth)
{
	Dwarf_Die child, type;
	int n = 0;
	strbuf_addch(sb, '(');
	if (!dwarf_child(sub, &child)) {
		do {
			if (dwarf_tag(&child) != DW_TAG_formal_parameter ||
			    dwarf_hasattr(&child, DW_AT_artificial))
				continue;
			if (n++)
				strbuf_addstr(sb, ", ");
			if (ref_attr(&child, DW_AT_type, &type))
				type_name(&type, sb, depth + 1);
			else
				strbuf_addstr(sb, "...");
		} while (!dwarf_siblingof(&child, &child));
	}
	strbuf_addch(sb, ')');
}

/* 1 + the closure types before cls in scope's subtree (lexical blocks included, not
 * nested functions or classes). 0 while cls is not found. */
static int lambda_number(Dwarf_Die *scope, Dwarf_Off cls, int *count)
{
	Dwarf_Die child;
	if (dwarf_child(scope, &child))
		return 0;
	do {
		int tag = dwarf_tag(&child);
		if (is_class(tag) && is_lambda(&child)) {
			++*count;
			if (dwarf_dieoffset(&child) == cls)
				return *count;
		} else if (tag == DW_TAG_lexical_block) {
			int k = lambda_number(&child, cls, count);
			if (k)
				return k;
		}
	} while (!dwarf_siblingof(&child, &child));
	return 0;
}

static void lambda_name(Dwarf_Die *cls, Dwarf_Die *enclosing, struct strbuf *sb, int depth)
{
	Dwarf_Die call;
	int count = 0;
	int k = enclosing ? lambda_number(enclosing, dwarf_dieoffset(cls), &count) : 0;
	strbuf_addstr(sb, "{lambda");
	if (lambda_call(cls, &call))
		param_list(&call, sb, depth);
	else
		strbuf_addstr(sb, "()");
	strbuf_addf(sb, "#%d}", k ? k : 1);
}

/* One scope's part of a qualified name; 0 when it adds nothing (unit, lexical block). */
static int scope_part(Dwarf_Die *s, Dwarf_Die *enclosing, struct strbuf *sb, int depth)
{
	int tag = dwarf_tag(s);
	const char *n = own_name(s);
	if (tag == DW_TAG_namespace) {
		strbuf_addstr(sb, n ? n : "(anonymous namespace)");
	} else if (is_class(tag) || tag == DW_TAG_enumeration_type) {
		if (n)
			strbuf_addstr(sb, n);
		else if (is_class(tag) && is_lambda(s))
			lambda_name(s, enclosing, sb, depth);
		else
			strbuf_addstr(sb, "{unnamed type#1}");
	} else {
		return 0;
	}
	return 1;
}

/* The scopes enclosing die, outermost first, as the demangler qualifies a name; the
 * number of scopes written (each followed by "::"). */
static int scope_prefix(Dwarf_Die *die, struct strbuf *sb, int depth);

/* Appends the demangled name of a subprogram: its linkage name demangled, else its
 * qualified DWARF name with parameters. */
static void subprogram_name(Dwarf_Die *sub, struct strbuf *sb, int depth)
{
	const char *link = NULL;
	Dwarf_Attribute attr;
	if (dwarf_attr_integrate(sub, DW_AT_linkage_name, &attr) ||
	    dwarf_attr_integrate(sub, DW_AT_MIPS_linkage_name, &attr))
		link = dwarf_formstring(&attr);
	if (link && *link) {
		char *d = cp_demangle(link);
		strbuf_addstr(sb, d);
		free(d);
		return;
	}
	char *q = cp_dwarf_qualified_name(sub);
	const char *n = dwarf_diename(sub);
	strbuf_addstr(sb, q ? q : n ? n : "<unknown>");
	free(q);
}

#define MAX_SCOPES 32

/* The DIEs from die's unit down to die: chain[0] the unit, chain[n - 1] die; -1 when not
 * found. Descends by offsets, stepping over siblings (DW_AT_sibling), rather than
 * visiting the whole unit as dwarf_getscopes_die does. */
static int scope_chain(Dwarf_Die *die, Dwarf_Die *chain)
{
	Dwarf_Off target = dwarf_dieoffset(die);
	int n = 0;
	if (!dwarf_diecu(die, &chain[0], NULL, NULL))
		return -1;
	for (n = 1; dwarf_dieoffset(&chain[n - 1]) != target; n++) {
		Dwarf_Die child, next;
		if (n == MAX_SCOPES || dwarf_child(&chain[n - 1], &child) ||
		    dwarf_dieoffset(&child) > target)
			return -1;
		while (dwarf_dieoffset(&child) != target && !dwarf_siblingof(&child, &next) &&
		       dwarf_dieoffset(&next) <= target)
			child = next;
		chain[n] = child;
	}
	return n;
}

static int scope_prefix(Dwarf_Die *die, struct strbuf *sb, int depth)
{
	Dwarf_Die chain[MAX_SCOPES];
	int n = depth < 8 ? scope_chain(die, chain) : -1, first = 1, parts = 0;
	Dwarf_Die *enclosing = NULL;
	/* The innermost enclosing function starts the name: its demangled name is already
	 * qualified. Lambdas are numbered in it. */
	for (int i = n - 2; i >= 1 && !enclosing; i--)
		if (dwarf_tag(&chain[i]) == DW_TAG_subprogram)
			enclosing = &chain[i], first = i + 1;
	if (enclosing) {
		subprogram_name(enclosing, sb, depth + 1);
		strbuf_addstr(sb, "::");
		parts++;
	}
	for (int i = first; i < n - 1; i++) {
		Dwarf_Die *context = enclosing ? enclosing : &chain[i - 1];
		if (scope_part(&chain[i], context, sb, depth)) {
			strbuf_addstr(sb, "::");
			parts++;
		}
	}
	return parts;
}

/* DWARF's base type names as the demangler spells them. */
static const char *base_type(const char *n)
{
	static const char *const names[][2] = {
	    {"long int", "long"},
	    {"long unsigned int", "unsigned long"},
	    {"short int", "short"},
	    {"short unsigned int", "unsigned short"},
	    {"long long int", "long long"},
	    {"long long unsigned int", "unsigned long long"},
	    {"__int128 unsigned", "unsigned __int128"},
	    {"_Float128", "__float128"},
	};
	for (size_t i = 0; n && i < sizeof names / sizeof names[0]; i++)
		if (!strcmp(n, names[i][0]))
			return names[i][1];
	return n ? n : "?";
}

static void type_name(Dwarf_Die *type, struct strbuf *sb, int depth)
{
	Dwarf_Die inner;
	int tag = dwarf_tag(type), has_inner = ref_attr(type, DW_AT_type, &inner);
	const char *n = own_name(type);
	if (depth > 16) {
		strbuf_addstr(sb, "?");
		return;
	}
	switch (tag) {
	case DW_TAG_base_type:
		strbuf_addstr(sb, base_type(n));
		return;
	case DW_TAG_pointer_type:
	case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type:
	case DW_TAG_const_type:
	case DW_TAG_volatile_type:
		if (has_inner)
			type_name(&inner, sb, depth + 1);
		else
			strbuf_addstr(sb, "void");
		strbuf_addstr(sb, tag == DW_TAG_pointer_type		? "*"
				  : tag == DW_TAG_reference_type	? "&"
				  : tag == DW_TAG_rvalue_reference_type ? "&&"
				  : tag == DW_TAG_const_type		? " const"
									: " volatile");
		return;
	case DW_TAG_typedef:
		if (has_inner) { /* mangled names hold the type, not the typedef */
			type_name(&inner, sb, depth + 1);
			return;
		}
		break;
	default:
		break;
	}
	scope_prefix(type, sb, depth + 1);
	if (n)
		strbuf_addstr(sb, n);
	else if (!scope_part(type, NULL, sb, depth + 1))
		strbuf_addstr(sb, "?");
}

/* The DIE holding a subprogram's name and members: abstract origin, then declaration. */
static void declaration_of(Dwarf_Die *die, Dwarf_Die *out)
{
	*out = *die;
	for (int i = 0; i < 8; i++) {
		Dwarf_Die next;
		if (!ref_attr(out, DW_AT_abstract_origin, &next) &&
		    !ref_attr(out, DW_AT_specification, &next))
			return;
		*out = next;
	}
}

/* const when the object pointer points to a const class (a lambda without `mutable`). */
static int const_member(Dwarf_Die *sub)
{
	Dwarf_Die obj, t;
	if (!ref_attr(sub, DW_AT_object_pointer, &obj) || !ref_attr(&obj, DW_AT_type, &t))
		return 0;
	if (dwarf_tag(&t) == DW_TAG_const_type && !ref_attr(&t, DW_AT_type, &t))
		return 0; /* the pointer itself may be const (GCC: `this` is a const pointer) */
	return dwarf_tag(&t) == DW_TAG_pointer_type && ref_attr(&t, DW_AT_type, &t) &&
	       dwarf_tag(&t) == DW_TAG_const_type;
}

char *cp_dwarf_qualified_name(Dwarf_Die *die)
{
	Dwarf_Die decl, cu;
	const char *name;
	declaration_of(die, &decl);
	/* GCC gives every C++ function a linkage name but a lambda's operator(). */
	if (!(name = own_name(&decl)) || strncmp(name, "operator()", 10) ||
	    !dwarf_diecu(&decl, &cu, NULL, NULL))
		return NULL;
	int lang = dwarf_srclang(&cu);
	if (lang != DW_LANG_C_plus_plus && lang != DW_LANG_C_plus_plus_03 &&
	    lang != DW_LANG_C_plus_plus_11 && lang != DW_LANG_C_plus_plus_14)
		return NULL;
	struct strbuf sb;
	strbuf_init(&sb);
	if (!scope_prefix(&decl, &sb, 0)) {
		strbuf_release(&sb);
		return NULL;
	}
	strbuf_addstr(&sb, name);
	param_list(&decl, &sb, 0);
	if (const_member(&decl))
		strbuf_addstr(&sb, " const");
	return strbuf_detach(&sb);
}
