// strata::Error -> strata.Error (a RuntimeError) and strata::OptionError -> strata.OptionError
// (a strata.Error and a ValueError): the C++ one-line message is the exception's text; where it
// was raised is the attribute `where`.
#include "bindings.hpp"
#include "src/base/error.hpp"

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

namespace nb = nanobind;

namespace strata::python {
namespace {

// Handles, not objects: the types live as long as the process (no reference count dropped after
// the interpreter is finalised).
nb::handle error_type;
nb::handle option_error_type;

void raise(nb::handle type, const Error& e) {
    nb::object instance = type(e.message());
    nb::setattr(instance, "where", nb::str(e.where().c_str()));
    PyErr_SetObject(type.ptr(), instance.ptr());
}

}  // namespace

void bind_errors(nb::module_& m) {
    error_type = nb::handle(PyErr_NewExceptionWithDoc(
        "strata.Error",
        "A Strata error: the C++ message, one line naming the file, the field and the value "
        "(attribute `where`: the C++ source position).",
        PyExc_RuntimeError, nullptr));
    const nb::object bases = nb::make_tuple(error_type, nb::handle(PyExc_ValueError));
    option_error_type = nb::handle(PyErr_NewExceptionWithDoc(
        "strata.OptionError",
        "A run option with a value that cannot work: '<option> = <value>: <why>' (attribute "
        "`option`).",
        bases.ptr(), nullptr));
    m.attr("Error") = error_type;
    m.attr("OptionError") = option_error_type;
    nb::register_exception_translator([](const std::exception_ptr& p, void*) {
        try {
            std::rethrow_exception(p);
        } catch (const OptionError& e) {
            nb::object instance = option_error_type(e.message());
            nb::setattr(instance, "where", nb::str(e.where().c_str()));
            nb::setattr(instance, "option", nb::str(e.option().c_str()));
            PyErr_SetObject(option_error_type.ptr(), instance.ptr());
        } catch (const Error& e) {
            raise(error_type, e);
        }
    });
}

}  // namespace strata::python
