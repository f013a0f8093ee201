/* The accelerated layer beneath the readable modules; dyngraph/_accelerated.py puts each of
 * these in place of its Python definition (NOTE [speedups] there lists them):
 *
 *   - the engine's common path: Function.apply (function.py) and BackwardPass.propagate
 *     (autograd.py), at the end of this file, with what they do and do not take;
 *   - the event spine's per-event helpers, the functions of the same names in events.py:
 *     preview / preview_and_norm read C-contiguous float32 and float64 numpy arrays directly
 *     (any other array goes to the Python definition); where_from_stack walks frames as the
 *     Python one does and shares its caches; emit delivers an event as the Python one does,
 *     reading and setting the same module globals of events.py (active, _dispatching,
 *     _dispatch_order) and handing a subscriber that raised to the same events._drop; the
 *     emit_* functions build their event in place;
 *   - the live view's listener (Collector) and filter (keep_rows) of dyngraph/jupyter/view.py.
 *
 * Read the Python definitions: they are the reference. While a widget or a recording listens,
 * the spine's helpers run for every node and every gradient; the engine's run for every op.
 * tests/test_speedups.py and tests/test_accelerated_engine.py check that both give the same
 * answers. Building this file is optional: without a C compiler, dyngraph uses the Python.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <math.h>

#if PY_VERSION_HEX < 0x030B0000 /* Python 3.10: frame.f_lasti counts code units of 2 bytes */
#include <frameobject.h>
static int PyFrame_GetLasti(PyFrameObject *frame) { return frame->f_lasti * 2; }
#endif

#define PREVIEW_SIZE 6 /* events.PREVIEW_SIZE */

/* Set once by configure(): the Python definitions (the fallbacks) and the caches shared with
   events.py. */
static PyObject *py_preview = NULL;          /* events._py_preview */
static PyObject *py_preview_and_norm = NULL; /* events._py_preview_and_norm */
static PyObject *new_where = NULL;           /* events._new_where(frame) -> SourceLine */
static PyObject *is_internal_file = NULL;    /* events._is_internal_file: filename -> bool */
static PyObject *where_cache = NULL;         /* events._where_cache: key -> (code, SourceLine) */
static PyObject *package_dir = NULL;         /* events._PACKAGE_DIR */
static PyObject *getframe = NULL;            /* sys._getframe */
static PyObject *hands_back_cache = NULL;    /* events._hands_back_cache: (code, lasti) -> bool */
static PyObject *hands_back = NULL;          /* events._hands_back(code, lasti) -> bool */
static PyObject *unnamed = NULL;             /* events._unnamed(where) -> SourceLine */
static Py_ssize_t where_cache_limit = 10000;

static int configured(void)
{
    if (getframe == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "dyngraph._speedups: call configure() first "
                                            "(importing dyngraph.events does)");
        return 0;
    }
    return 1;
}

/* ------------------------------------------------------------------------------- previews */

/* A float32 or float64 array in native byte order and row-major layout, or NULL. */
static PyArrayObject *readable_array(PyObject *obj)
{
    if (Py_TYPE(obj) != &PyArray_Type) {
        return NULL;
    }
    PyArrayObject *array = (PyArrayObject *)obj;
    int type = PyArray_TYPE(array);
    if ((type != NPY_FLOAT && type != NPY_DOUBLE) || !PyArray_ISNOTSWAPPED(array) ||
        !PyArray_IS_C_CONTIGUOUS(array)) {
        return NULL;
    }
    return array;
}

/* Numbers in one row-major block of float32 or float64: a numpy array's, or a torch tensor's
   (dyngraph.torch's functions, at the end of this file). Valid while their owner lives. */
typedef struct {
    const void *data;
    Py_ssize_t n;
    int is_float32;
} Numbers;

static Numbers numbers_of_array(PyArrayObject *array)
{
    Numbers numbers = {PyArray_DATA(array), PyArray_SIZE(array), PyArray_TYPE(array) == NPY_FLOAT};
    return numbers;
}

static double number_at(const Numbers *numbers, Py_ssize_t i)
{
    if (numbers->is_float32) {
        return (double)((const float *)numbers->data)[i];
    }
    return ((const double *)numbers->data)[i];
}

/* The first PREVIEW_SIZE numbers as a tuple of Python floats. */
static PyObject *first_numbers(const Numbers *numbers)
{
    Py_ssize_t n = numbers->n < PREVIEW_SIZE ? numbers->n : PREVIEW_SIZE;
    PyObject *preview = PyTuple_New(n);
    if (preview == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *number = PyFloat_FromDouble(number_at(numbers, i));
        if (number == NULL) {
            Py_DECREF(preview);
            return NULL;
        }
        PyTuple_SET_ITEM(preview, i, number);
    }
    return preview;
}

/* The L2 norm: nan if any number is nan, else inf if any is inf; squares are summed in double
   and rescaled by the largest number when they overflow or underflow, as math.hypot does. */
static double l2_norm(const Numbers *numbers)
{
    double sum = 0.0, largest = 0.0;
    int has_inf = 0, has_nan = 0;
    for (Py_ssize_t i = 0; i < numbers->n; i++) {
        double x = fabs(number_at(numbers, i));
        if (isinf(x)) {
            has_inf = 1;
        }
        else if (isnan(x)) {
            has_nan = 1;
        }
        else if (x > largest) {
            largest = x;
        }
        sum += x * x;
    }
    if (has_nan) {
        return NAN;
    }
    if (has_inf) {
        return INFINITY;
    }
    if (isinf(sum) || (sum < 1e-300 && largest > 0.0)) { /* overflow or underflow: rescale */
        sum = 0.0;
        for (Py_ssize_t i = 0; i < numbers->n; i++) {
            double x = number_at(numbers, i) / largest;
            sum += x * x;
        }
        return largest * sqrt(sum);
    }
    return sqrt(sum);
}

static PyObject *preview(PyObject *module, PyObject *obj)
{
    PyArrayObject *array = readable_array(obj);
    if (array == NULL) {
        return configured() ? PyObject_CallOneArg(py_preview, obj) : NULL;
    }
    Numbers numbers = numbers_of_array(array);
    return first_numbers(&numbers);
}

static PyObject *preview_and_norm(PyObject *module, PyObject *obj)
{
    PyArrayObject *array = readable_array(obj);
    if (array == NULL) {
        return configured() ? PyObject_CallOneArg(py_preview_and_norm, obj) : NULL;
    }
    Numbers numbers = numbers_of_array(array);
    PyObject *preview = first_numbers(&numbers);
    if (preview == NULL) {
        return NULL;
    }
    PyObject *norm = PyFloat_FromDouble(l2_norm(&numbers));
    if (norm == NULL) {
        Py_DECREF(preview);
        return NULL;
    }
    PyObject *result = PyTuple_Pack(2, preview, norm);
    Py_DECREF(preview);
    Py_DECREF(norm);
    return result;
}

/* ------------------------------------------------------------------------------- where */

/* 1 if the file is inside the dyngraph package, 0 if not, -1 on error (cached by filename). */
static int internal_file(PyObject *filename)
{
    PyObject *known = PyDict_GetItemWithError(is_internal_file, filename); /* borrowed */
    if (known != NULL) {
        return known == Py_True;
    }
    if (PyErr_Occurred()) {
        return -1;
    }
    Py_ssize_t match = PyUnicode_Tailmatch(filename, package_dir, 0, PY_SSIZE_T_MAX, -1);
    if (match < 0 ||
        PyDict_SetItem(is_internal_file, filename, match ? Py_True : Py_False) < 0) {
        return -1;
    }
    return (int)match;
}

/* 1 if this frame of dyngraph's returns the value of the call it makes, 0 if not, -1 on error
   (events._hands_back, whose cache is read here first). */
static int frame_hands_back(PyCodeObject *code, PyObject *frame)
{
    PyObject *lasti = PyLong_FromLong(PyFrame_GetLasti((PyFrameObject *)frame));
    if (lasti == NULL) {
        return -1;
    }
    PyObject *key = PyTuple_Pack(2, (PyObject *)code, lasti);
    Py_DECREF(lasti);
    if (key == NULL) {
        return -1;
    }
    PyObject *known = PyDict_GetItemWithError(hands_back_cache, key); /* borrowed */
    if (known != NULL) {
        Py_DECREF(key);
        return known == Py_True;
    }
    if (PyErr_Occurred()) {
        Py_DECREF(key);
        return -1;
    }
    PyObject *result = PyObject_CallFunctionObjArgs(hands_back, PyTuple_GET_ITEM(key, 0),
                                                    PyTuple_GET_ITEM(key, 1), NULL);
    Py_DECREF(key);
    if (result == NULL) {
        return -1;
    }
    int truth = PyObject_IsTrue(result);
    Py_DECREF(result);
    return truth;
}

static PyObject *where_from_stack(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    /* sys._getframe(0) called from here is our caller's frame: the Python definition's
       frame ``depth`` is frame ``depth - 1`` here. */
    long depth = 1;
    int named = 0;
    int handed_back = 1;
    if (!configured()) {
        return NULL;
    }
    if (nargs > 2) {
        PyErr_SetString(PyExc_TypeError, "where_from_stack() takes at most two arguments");
        return NULL;
    }
    if (nargs >= 1) {
        depth = PyLong_AsLong(args[0]);
        if (depth == -1 && PyErr_Occurred()) {
            return NULL;
        }
    }
    if (nargs == 2) {
        named = PyObject_IsTrue(args[1]);
        if (named < 0) {
            return NULL;
        }
    }
    PyObject *level = PyLong_FromLong(depth > 0 ? depth - 1 : 0);
    if (level == NULL) {
        return NULL;
    }
    PyObject *frame = PyObject_CallOneArg(getframe, level);
    Py_DECREF(level);
    if (frame == NULL) {
        return NULL;
    }
    PyCodeObject *code = NULL;
    while (frame != NULL) {
        code = PyFrame_GetCode((PyFrameObject *)frame);
        int internal = internal_file(code->co_filename);
        if (internal < 0) {
            Py_DECREF(code);
            Py_DECREF(frame);
            return NULL;
        }
        if (!internal) {
            break;
        }
        if (named && handed_back) {
            handed_back = frame_hands_back(code, frame);
            if (handed_back < 0) {
                Py_DECREF(code);
                Py_DECREF(frame);
                return NULL;
            }
        }
        Py_DECREF(code);
        code = NULL;
        PyObject *back = (PyObject *)PyFrame_GetBack((PyFrameObject *)frame);
        Py_DECREF(frame);
        frame = back;
    }
    if (frame == NULL) {
        Py_RETURN_NONE;
    }
    /* A loop runs the same instruction many times: its SourceLine is cached, under the key the
       Python definition uses, (id(code), f_lasti). */
    PyObject *key = Py_BuildValue("(Ni)", PyLong_FromVoidPtr(code),
                                  PyFrame_GetLasti((PyFrameObject *)frame));
    PyObject *where = NULL;
    if (key == NULL) {
        goto done;
    }
    PyObject *cached = PyDict_GetItemWithError(where_cache, key); /* borrowed */
    if (cached != NULL && PyTuple_GET_ITEM(cached, 0) == (PyObject *)code) {
        where = Py_NewRef(PyTuple_GET_ITEM(cached, 1));
        goto done;
    }
    if (PyErr_Occurred()) {
        goto done;
    }
    if (PyDict_GET_SIZE(where_cache) > where_cache_limit) {
        PyDict_Clear(where_cache);
    }
    where = PyObject_CallOneArg(new_where, frame);
    if (where == NULL) {
        goto done;
    }
    PyObject *entry = PyTuple_Pack(2, (PyObject *)code, where);
    if (entry == NULL || PyDict_SetItem(where_cache, key, entry) < 0) {
        Py_CLEAR(where);
    }
    Py_XDECREF(entry);
done:
    Py_XDECREF(key);
    Py_DECREF(code);
    Py_DECREF(frame);
    if (where != NULL && !handed_back) { /* a part of what the line assigns: no target */
        Py_SETREF(where, PyObject_CallOneArg(unnamed, where));
    }
    return where;
}

/* ------------------------------------------------------------------------------- emit */

static PyObject *events_globals = NULL; /* events.py's module dict: the spine's state */
static PyObject *drop = NULL;           /* events._drop(key, fn, exc, stacklevel) */
static PyObject *name_active = NULL, *name_dispatching = NULL, *name_dispatch_order = NULL;

/* events.emit: deliver ``event`` to every subscriber, in order; a subscriber that raises an
   Exception is handed to events._drop, anything else (KeyboardInterrupt) propagates. */
static PyObject *emit(PyObject *module, PyObject *event)
{
    if (events_globals == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "dyngraph._speedups: call configure_emit() first "
                                            "(importing dyngraph.events does)");
        return NULL;
    }
    PyObject *active = PyDict_GetItemWithError(events_globals, name_active); /* borrowed */
    if (active != Py_True) {
        if (active == NULL && PyErr_Occurred()) {
            return NULL;
        }
        Py_RETURN_NONE;
    }
    PyObject *order = PyDict_GetItemWithError(events_globals, name_dispatch_order);
    if (order == NULL || !PyTuple_Check(order)) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_TypeError, "events._dispatch_order must be a tuple");
        }
        return NULL;
    }
    Py_INCREF(order); /* the loop runs over the subscribers as they were when it began */
    /* a subscriber that creates tensors does not re-enter */
    if (PyDict_SetItem(events_globals, name_active, Py_False) < 0 ||
        PyDict_SetItem(events_globals, name_dispatching, Py_True) < 0) {
        Py_DECREF(order);
        return NULL;
    }
    int failed = 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(order) && !failed; i++) {
        PyObject *entry = PyTuple_GET_ITEM(order, i); /* (key, fn) */
        PyObject *key = PyTuple_GET_ITEM(entry, 0), *fn = PyTuple_GET_ITEM(entry, 1);
        PyObject *result = PyObject_CallOneArg(fn, event);
        if (result != NULL) {
            Py_DECREF(result);
            continue;
        }
        if (!PyErr_ExceptionMatches(PyExc_Exception)) {
            failed = 1; /* propagates, after the state is restored below */
            break;
        }
        PyObject *type, *value, *traceback;
        PyErr_Fetch(&type, &value, &traceback);
        PyErr_NormalizeException(&type, &value, &traceback);
        if (traceback != NULL) {
            PyException_SetTraceback(value, traceback);
        }
        /* stacklevel 2: no Python frame of emit's lies between _drop and emit's caller */
        PyObject *dropped = PyObject_CallFunction(drop, "OOOi", key, fn, value, 2);
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(traceback);
        if (dropped == NULL) {
            failed = 1;
        }
        Py_XDECREF(dropped);
    }
    Py_DECREF(order);
    /* finally: _dispatching = False; active = bool(_dispatch_order) (as it is now: _drop may
       have changed it), keeping a pending exception */
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    PyObject *now = PyDict_GetItemWithError(events_globals, name_dispatch_order);
    int any = now == NULL ? -1 : PyObject_IsTrue(now);
    if (any < 0 || PyDict_SetItem(events_globals, name_dispatching, Py_False) < 0 ||
        PyDict_SetItem(events_globals, name_active, any ? Py_True : Py_False) < 0) {
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(traceback);
        return NULL;
    }
    PyErr_Restore(type, value, traceback);
    if (failed) {
        return NULL;
    }
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------------------------- collector */

/* A subscriber that appends each event to a list and calls tick() every n-th event, n being
   what tick() returned last (1 at first): the live view's listener, whose definition is
   ``_collecting_listener`` in dyngraph/jupyter/view.py. */
typedef struct {
    PyObject_HEAD
    PyObject *events; /* the list events are appended to */
    PyObject *tick;   /* called with no arguments; returns the next stride (an int >= 1) */
    long countdown;   /* events until the next tick */
    vectorcallfunc vectorcall;
} Collector;

static PyObject *collector_vectorcall(PyObject *self_, PyObject *const *args, size_t nargsf,
                                      PyObject *kwnames)
{
    Collector *self = (Collector *)self_;
    if (PyVectorcall_NARGS(nargsf) != 1 || kwnames != NULL) {
        PyErr_SetString(PyExc_TypeError, "a Collector takes one event");
        return NULL;
    }
    if (PyList_Append(self->events, args[0]) < 0) {
        return NULL;
    }
    if (--self->countdown > 0) {
        Py_RETURN_NONE;
    }
    PyObject *stride = PyObject_CallNoArgs(self->tick);
    if (stride == NULL) {
        self->countdown = 1;
        return NULL;
    }
    long next = PyLong_AsLong(stride);
    Py_DECREF(stride);
    if (next == -1 && PyErr_Occurred()) {
        self->countdown = 1;
        return NULL;
    }
    self->countdown = next > 0 ? next : 1;
    Py_RETURN_NONE;
}

static PyObject *collector_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *events, *tick;
    if (!PyArg_ParseTuple(args, "O!O:Collector", &PyList_Type, &events, &tick)) {
        return NULL;
    }
    Collector *self = (Collector *)type->tp_alloc(type, 0);
    if (self == NULL) {
        return NULL;
    }
    self->events = Py_NewRef(events);
    self->tick = Py_NewRef(tick);
    self->countdown = 1;
    self->vectorcall = collector_vectorcall;
    return (PyObject *)self;
}

static int collector_traverse(Collector *self, visitproc visit, void *arg)
{
    Py_VISIT(self->events);
    Py_VISIT(self->tick);
    return 0;
}

static int collector_clear(Collector *self)
{
    Py_CLEAR(self->events);
    Py_CLEAR(self->tick);
    return 0;
}

static void collector_dealloc(Collector *self)
{
    PyObject_GC_UnTrack(self);
    collector_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMemberDef collector_members[] = {
    {"countdown", T_LONG, offsetof(Collector, countdown), READONLY, "events until the next tick"},
    {NULL},
};

static PyTypeObject CollectorType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "dyngraph._speedups.Collector",
    .tp_basicsize = sizeof(Collector),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "Collector(events, tick): appends each event to the list events and calls "
              "tick() every n-th event, n being what tick() returned last (1 at first).",
    .tp_new = collector_new,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(Collector, vectorcall),
    .tp_traverse = (traverseproc)collector_traverse,
    .tp_clear = (inquiry)collector_clear,
    .tp_dealloc = (destructor)collector_dealloc,
    .tp_members = collector_members,
};

/* events.emit_edge_grad: emit(EdgeGrad(node, input, position, preview(contribution),
   reduced_from)), the event built in place (the NamedTuple's tuple filled directly). */
static PyObject *edge_grad_type = NULL; /* events.EdgeGrad */

static PyObject *emit_edge_grad(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "emit_edge_grad() takes 5 arguments");
        return NULL;
    }
    if (edge_grad_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "dyngraph._speedups: call configure_emit() first");
        return NULL;
    }
    PyObject *values = preview(module, args[3]);
    if (values == NULL) {
        return NULL;
    }
    PyTypeObject *type = (PyTypeObject *)edge_grad_type;
    PyObject *event = type->tp_alloc(type, 5);
    if (event == NULL) {
        Py_DECREF(values);
        return NULL;
    }
    PyTuple_SET_ITEM(event, 0, Py_NewRef(args[0]));
    PyTuple_SET_ITEM(event, 1, Py_NewRef(args[1]));
    PyTuple_SET_ITEM(event, 2, Py_NewRef(args[2]));
    PyTuple_SET_ITEM(event, 3, values);
    PyTuple_SET_ITEM(event, 4, Py_NewRef(args[4]));
    PyObject *result = emit(module, event);
    Py_DECREF(event);
    return result;
}

/* events.emit_grad_computed: emit(GradComputed(id, *preview_and_norm(gradient), accumulated)),
   the event built in place. */
static PyObject *grad_computed_type = NULL; /* events.GradComputed */

static PyObject *emit_grad_computed(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "emit_grad_computed() takes 3 arguments");
        return NULL;
    }
    if (grad_computed_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "dyngraph._speedups: call configure_emit() first");
        return NULL;
    }
    PyObject *pair = preview_and_norm(module, args[1]); /* (preview, norm) */
    if (pair == NULL) {
        return NULL;
    }
    if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
        Py_DECREF(pair);
        PyErr_SetString(PyExc_TypeError, "preview_and_norm must return (preview, norm)");
        return NULL;
    }
    PyTypeObject *type = (PyTypeObject *)grad_computed_type;
    PyObject *event = type->tp_alloc(type, 4);
    if (event == NULL) {
        Py_DECREF(pair);
        return NULL;
    }
    PyTuple_SET_ITEM(event, 0, Py_NewRef(args[0]));
    PyTuple_SET_ITEM(event, 1, Py_NewRef(PyTuple_GET_ITEM(pair, 0)));
    PyTuple_SET_ITEM(event, 2, Py_NewRef(PyTuple_GET_ITEM(pair, 1)));
    PyTuple_SET_ITEM(event, 3, Py_NewRef(args[2]));
    Py_DECREF(pair);
    PyObject *result = emit(module, event);
    Py_DECREF(event);
    return result;
}

/* events.emit_op_created: emit(NodeCreated(id, op, inputs, array.shape, dtype_name(array.dtype),
   device_of(array), True, False, name, scope, where, preview(array), saved_bytes, recomputing,
   elapsed)), the event built in place. A numpy array is on the CPU; the dtype's name comes from
   events._dtype_names, the cache dtype_name() fills (it is called on a miss, as is
   backend.device_of for any other array). */
static PyObject *str_shape = NULL, *str_dtype = NULL, *str_cpu = NULL;
static PyObject *node_created_type = NULL; /* events.NodeCreated */
static PyObject *name_dtype_names = NULL, *name_dtype_name = NULL;
static PyObject *name_recomputing = NULL, *name_backend = NULL;

static PyObject *events_global(PyObject *name) /* a new reference, or NULL with an error */
{
    PyObject *value = PyDict_GetItemWithError(events_globals, name);
    if (value == NULL && !PyErr_Occurred()) {
        PyErr_Format(PyExc_RuntimeError, "dyngraph.events has no %R", name);
    }
    return Py_XNewRef(value);
}

static PyObject *dtype_name_of(PyObject *array)
{
    PyObject *dtype = PyObject_GetAttr(array, str_dtype);
    if (dtype == NULL) {
        return NULL;
    }
    PyObject *names = events_global(name_dtype_names);
    PyObject *name = names == NULL ? NULL : PyDict_GetItemWithError(names, dtype);
    Py_XDECREF(names);
    if (name != NULL) {
        Py_DECREF(dtype);
        return Py_NewRef(name);
    }
    if (PyErr_Occurred()) {
        Py_DECREF(dtype);
        return NULL;
    }
    PyObject *function = events_global(name_dtype_name);
    name = function == NULL ? NULL : PyObject_CallOneArg(function, dtype);
    Py_XDECREF(function);
    Py_DECREF(dtype);
    return name;
}

static PyObject *device_of(PyObject *array)
{
    if (Py_TYPE(array) == &PyArray_Type) {
        return Py_NewRef(str_cpu);
    }
    PyObject *backend = events_global(name_backend);
    PyObject *device = backend == NULL ? NULL : PyObject_CallMethod(backend, "device_of", "O",
                                                                    array);
    Py_XDECREF(backend);
    return device;
}

static PyObject *emit_op_created(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 9) {
        PyErr_SetString(PyExc_TypeError, "emit_op_created() takes 9 arguments");
        return NULL;
    }
    if (node_created_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "dyngraph._speedups: call configure_emit() first");
        return NULL;
    }
    PyObject *array = args[3];
    PyObject *fields[15] = {NULL};
    fields[0] = Py_NewRef(args[0]);              /* id */
    fields[1] = Py_NewRef(args[1]);              /* op */
    fields[2] = Py_NewRef(args[2]);              /* inputs */
    fields[3] = PyObject_GetAttr(array, str_shape);
    fields[4] = fields[3] == NULL ? NULL : dtype_name_of(array);
    fields[5] = fields[4] == NULL ? NULL : device_of(array);
    fields[6] = Py_NewRef(Py_True);              /* requires_grad */
    fields[7] = Py_NewRef(Py_False);             /* is_leaf */
    fields[8] = Py_NewRef(args[4]);              /* name */
    fields[9] = Py_NewRef(args[5]);              /* scope */
    fields[10] = Py_NewRef(args[6]);             /* where */
    fields[11] = fields[5] == NULL ? NULL : preview(module, array);
    fields[12] = Py_NewRef(args[7]);             /* saved_bytes */
    fields[13] = fields[11] == NULL ? NULL : events_global(name_recomputing);
    fields[14] = Py_NewRef(args[8]);             /* elapsed */
    PyTypeObject *type = (PyTypeObject *)node_created_type;
    PyObject *event = fields[13] == NULL ? NULL : type->tp_alloc(type, 15);
    if (event == NULL) {
        for (int i = 0; i < 15; i++) {
            Py_XDECREF(fields[i]);
        }
        return NULL;
    }
    for (int i = 0; i < 15; i++) {
        PyTuple_SET_ITEM(event, i, fields[i]); /* steals each reference */
    }
    PyObject *result = emit(module, event);
    Py_DECREF(event);
    return result;
}

/* dyngraph.jupyter.view.keep_rows: the live view's filter, once per event (read the Python
   definition there). Events are the NamedTuples of events.py: a node_created, grad_computed or
   version_bumped has its node id at index 0, an edge_grad its node and input at 0 and 1. The
   display texts of the kept rows' numbers (view.display_texts) are written one after another
   into one buffer, which becomes one str: no Python object per number (NOTE [display texts]). */
static PyObject *str_kind = NULL, *kind_node_created = NULL, *kind_grad_computed = NULL;
static PyObject *kind_version_bumped = NULL, *kind_edge_grad = NULL;
static PyObject *dot_format_bytes = NULL, *dot_format_elapsed = NULL; /* dyngraph.dot's */
static PyObject *saved_texts = NULL; /* saved bytes -> dot.format_bytes of them */
/* where the events of events.py keep the numbers that have texts (their _fields, read once):
   by index, an event's field costs a bounds check instead of an attribute lookup */
static Py_ssize_t node_preview_at, node_saved_at, node_elapsed_at;
static Py_ssize_t grad_preview_at, grad_norm_at, edge_preview_at;

static int same_kind(PyObject *kind, PyObject *name) /* 1, 0, or -1 with an error */
{
    return kind == name ? 1 : PyObject_RichCompareBool(kind, name, Py_EQ);
}

/* dot.format_value: a float (exactly) with four significant digits, as format(x, ".4g") writes
   it, anything else as str(). format(x, ".4g") is PyOS_double_to_string(x, 'g', 4, 0, NULL),
   which finds the digits of the exact binary value (dtoa), and for a watched op that was most
   of what its rows cost (benchmarks/README.md, W1V). four_digits below gets the same text for
   nearly every float with a few double operations and hands the rest to PyOS_double_to_string;
   tests/test_speedups.py compares the two on ties, boundaries and a hundred thousand random
   numbers. */
static const double exact_powers_of_ten[23] = {
    1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

/* a * 10^shift in steps by powers of ten that a double holds exactly (up to 1e22): each step
   rounds once, so the result is within (steps) units in the last place of the exact product. */
static double times_power_of_ten(double a, int shift)
{
    for (; shift > 22; shift -= 22) {
        a *= exact_powers_of_ten[22];
    }
    for (; shift < -22; shift += 22) {
        a /= exact_powers_of_ten[22];
    }
    return shift >= 0 ? a * exact_powers_of_ten[shift] : a / exact_powers_of_ten[-shift];
}

/* format(x, ".4g") for a finite x != 0 into out (at least 16 chars); its length, or 0 when the
   exact way must decide. |x| scaled by a power of ten into [1000, 10000) is within a few units
   in the last place (1.8e-12 each there) of the exact product: unless that product lies near
   a tie (a fraction near one half), it rounds to the same four digits as the exact value. */
static int four_digits(double x, char *out)
{
    double a = fabs(x);
    int binary_exponent;
    frexp(a, &binary_exponent); /* a = m * 2^binary_exponent, 1/2 <= m < 1 */
    /* of the first decimal digit: log10(a) lies within log10(2) below (binary_exponent) *
       log10(2), so this is right or one off, which the loop corrects */
    int exponent = (int)floor(binary_exponent * 0.30102999566398120);
    double scaled = 0.0;
    for (int tries = 0; tries < 3; tries++) {
        scaled = times_power_of_ten(a, 3 - exponent);
        if (scaled < 1000.0) {
            exponent--;
        } else if (scaled >= 10000.0) {
            exponent++;
        } else {
            break;
        }
    }
    if (!(scaled >= 1000.0 && scaled < 10000.0)) {
        return 0;
    }
    double whole = floor(scaled);
    double fraction = scaled - whole;
    if (fabs(fraction - 0.5) < 1e-6) {
        return 0; /* near a tie: half to even on the exact value is dtoa's to decide */
    }
    int n = (int)whole + (fraction > 0.5);
    if (n == 10000) { /* 9999.7 -> 1.000e+(exponent + 1) */
        n = 1000;
        exponent++;
    }
    char digits[4] = {(char)('0' + n / 1000), (char)('0' + n / 100 % 10),
                      (char)('0' + n / 10 % 10), (char)('0' + n % 10)};
    int significant = 4; /* without the trailing zeros, which "g" drops */
    while (significant > 1 && digits[significant - 1] == '0') {
        significant--;
    }
    char *p = out;
    if (x < 0) {
        *p++ = '-';
    }
    if (exponent < -4 || exponent >= 4) { /* 1.235e+05, 1e-05 */
        *p++ = digits[0];
        if (significant > 1) {
            *p++ = '.';
            memcpy(p, digits + 1, significant - 1);
            p += significant - 1;
        }
        int e = exponent < 0 ? -exponent : exponent;
        *p++ = 'e';
        *p++ = exponent < 0 ? '-' : '+';
        if (e >= 100) {
            *p++ = (char)('0' + e / 100);
        }
        *p++ = (char)('0' + e / 10 % 10);
        *p++ = (char)('0' + e % 10);
    } else if (exponent >= 0) { /* 12.35, 1234, 1.5 */
        memcpy(p, digits, exponent + 1);
        p += exponent + 1;
        if (significant > exponent + 1) {
            *p++ = '.';
            memcpy(p, digits + exponent + 1, significant - exponent - 1);
            p += significant - exponent - 1;
        }
    } else { /* 0.001235 */
        *p++ = '0';
        *p++ = '.';
        for (int k = 0; k < -exponent - 1; k++) {
            *p++ = '0';
        }
        memcpy(p, digits, significant);
        p += significant;
    }
    return (int)(p - out);
}

/* The display texts of a batch: written one after another, a newline between two, into a
   buffer that grows as needed, and made one str at the end (stream_str). */
typedef struct {
    char *data;
    Py_ssize_t length, capacity;
    Py_ssize_t count; /* texts written so far */
    int ascii;        /* 0 once a text was not ASCII: the str is then decoded from UTF-8 */
} TextStream;

/* The next text, n chars: 0, or -1 with an error. */
static int stream_put(TextStream *stream, const char *text, Py_ssize_t n)
{
    if (stream->length + n + 1 > stream->capacity) {
        Py_ssize_t capacity = 2 * stream->capacity + n + 1024;
        char *data = PyMem_Realloc(stream->data, capacity);
        if (data == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        stream->data = data;
        stream->capacity = capacity;
    }
    char *p = stream->data + stream->length;
    if (stream->count++ > 0) {
        *p++ = '\n';
    }
    memcpy(p, text, n);
    stream->length = p + n - stream->data;
    return 0;
}

static int stream_put_str(TextStream *stream, PyObject *text) /* a str; 0 or -1 */
{
    if (!PyUnicode_Check(text)) {
        PyErr_SetString(PyExc_TypeError, "keep_rows: a display text is a str");
        return -1;
    }
    Py_ssize_t n;
    const char *utf8 = PyUnicode_AsUTF8AndSize(text, &n);
    if (utf8 == NULL) {
        return -1;
    }
    if (!PyUnicode_IS_ASCII(text)) {
        stream->ascii = 0;
    }
    return stream_put(stream, utf8, n);
}

static PyObject *stream_str(TextStream *stream) /* the texts as one str, a new reference */
{
    if (!stream->ascii) {
        return PyUnicode_DecodeUTF8(stream->data, stream->length, "strict");
    }
    PyObject *result = PyUnicode_New(stream->length, 127); /* ASCII: no decoding */
    if (result != NULL && stream->length > 0) {
        memcpy(PyUnicode_DATA(result), stream->data, stream->length);
    }
    return result;
}

/* The texts four_digits wrote lately, kept by the float's bits: each float has one of 256
   slots (a hash of its bits), which the next float hashed there takes over. A number often
   reaches the page more than once: a gradient comes as the edge_grad that carried it, then as
   its node's grad_computed, and an op that hands its gradient on (Add) sends the same numbers
   again: about half of those of W3's epoch are found here. four_digits is most of what the
   texts cost (benchmarks/README.md, W1V); a number found costs a hash and a copy. */
typedef struct {
    uint64_t bits;
    int length; /* 0: empty */
    char text[16];
} FloatText;
static FloatText float_texts[256];

/* dot.format_value of value, onto the stream: 0 or -1. A float as four_digits writes it (or
   PyOS_double_to_string where it cannot: ties, infinities, NaN), a bool or an int that fits a
   long long as str writes it, anything else through str. */
static int put_value(TextStream *stream, PyObject *value)
{
    char fast[32];
    int length = 0;
    if (PyFloat_CheckExact(value)) {
        double x = PyFloat_AS_DOUBLE(value);
        if (x == 0.0) {
            length = signbit(x) ? 2 : 1;
            memcpy(fast, signbit(x) ? "-0" : "0", length);
        } else if (isfinite(x)) {
            uint64_t bits;
            memcpy(&bits, &x, sizeof bits);
            FloatText *known = &float_texts[(bits * 0x9E3779B97F4A7C15ULL) >> 56];
            if (known->length > 0 && known->bits == bits) {
                return stream_put(stream, known->text, known->length);
            }
            length = four_digits(x, fast);
            if (length > 0) {
                known->bits = bits;
                known->length = length;
                memcpy(known->text, fast, length);
            }
        }
        if (length == 0) {
            char *text = PyOS_double_to_string(x, 'g', 4, 0, NULL);
            if (text == NULL) {
                return -1;
            }
            int done = stream_put(stream, text, (Py_ssize_t)strlen(text));
            PyMem_Free(text);
            return done;
        }
    } else if (value == Py_True || value == Py_False) {
        return stream_put(stream, value == Py_True ? "True" : "False", value == Py_True ? 4 : 5);
    } else if (PyLong_CheckExact(value)) {
        int overflow;
        long long n = PyLong_AsLongLongAndOverflow(value, &overflow);
        if (n == -1 && PyErr_Occurred()) {
            return -1;
        }
        if (!overflow) { /* its digits, last first, then turned around (cheaper than snprintf) */
            unsigned long long rest = n < 0 ? 0ULL - (unsigned long long)n : (unsigned long long)n;
            char digits[24];
            int count = 0;
            do {
                digits[count++] = (char)('0' + rest % 10);
                rest /= 10;
            } while (rest > 0);
            if (n < 0) {
                fast[length++] = '-';
            }
            while (count > 0) {
                fast[length++] = digits[--count];
            }
        }
    }
    if (length > 0) {
        return stream_put(stream, fast, length);
    }
    PyObject *text = PyObject_Str(value); /* an int beyond 64 bits, a numpy scalar */
    if (text == NULL) {
        return -1;
    }
    int done = stream_put_str(stream, text);
    Py_DECREF(text);
    return done;
}

/* The text of value through `format` (a Python function of dot.py), or "" when value is None
   or, with `when_true`, false (0 bytes saved); onto the stream: 0 or -1. With a `cache` (a
   dict), texts already made are taken from it: a lesson's ops save a few sizes over and over,
   and a call into Python cost as much as the rest of the row. */
static int put_field_text(TextStream *stream, PyObject *value, PyObject *format, int when_true,
                          PyObject *cache)
{
    int shown = value != Py_None;
    if (shown && when_true) {
        shown = PyObject_IsTrue(value);
    }
    if (shown <= 0) {
        return shown < 0 ? -1 : stream_put(stream, "", 0);
    }
    PyObject *text = cache == NULL ? NULL : PyDict_GetItemWithError(cache, value); /* borrowed */
    if (text != NULL) {
        return stream_put_str(stream, text);
    }
    if (PyErr_Occurred()) {
        return -1;
    }
    text = PyObject_CallOneArg(format, value);
    if (text == NULL) {
        return -1;
    }
    int done = stream_put_str(stream, text);
    if (done == 0 && cache != NULL && PyDict_GET_SIZE(cache) < 1000) {
        done = PyDict_SetItem(cache, value, text);
    }
    Py_DECREF(text);
    return done;
}

/* view.display_texts of a node_created (kind 1), grad_computed (2) or edge_grad (3), onto the
   stream: 0, or -1 with an error. */
static int put_display_texts(TextStream *stream, int kind, PyObject *event)
{
    Py_ssize_t preview_at = kind == 1 ? node_preview_at : kind == 2 ? grad_preview_at
                                                                    : edge_preview_at;
    Py_ssize_t last = kind == 1 ? Py_MAX(node_saved_at, node_elapsed_at)
                                : kind == 2 ? Py_MAX(grad_preview_at, grad_norm_at) : preview_at;
    if (Py_MAX(preview_at, last) >= PyTuple_GET_SIZE(event)) {
        PyErr_SetString(PyExc_TypeError,
                        "keep_rows: an event has fewer fields than its class in events.py");
        return -1;
    }
    PyObject *preview = PyTuple_GET_ITEM(event, preview_at);
    PyObject *values = PySequence_Fast(preview, "a preview is a sequence of numbers");
    if (values == NULL) {
        return -1;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(values);
    for (Py_ssize_t k = 0; k < n; k++) {
        if (put_value(stream, PySequence_Fast_GET_ITEM(values, k)) < 0) {
            Py_DECREF(values);
            return -1;
        }
    }
    Py_DECREF(values);
    if (kind == 1) {
        if (put_field_text(stream, PyTuple_GET_ITEM(event, node_saved_at), dot_format_bytes, 1,
                           saved_texts) < 0) {
            return -1;
        }
        return put_field_text(stream, PyTuple_GET_ITEM(event, node_elapsed_at),
                              dot_format_elapsed, 0, NULL);
    }
    if (kind == 2) {
        return put_value(stream, PyTuple_GET_ITEM(event, grad_norm_at));
    }
    return 0;
}

/* The index of field `name` in events.py's class `cls` (its _fields): 0 or -1. */
static int field_index(PyObject *events_module, const char *cls, const char *name,
                       Py_ssize_t *at)
{
    PyObject *type = PyObject_GetAttrString(events_module, cls);
    PyObject *fields = type == NULL ? NULL : PyObject_GetAttrString(type, "_fields");
    PyObject *key = fields == NULL ? NULL : PyUnicode_FromString(name);
    *at = key == NULL ? -1 : PySequence_Index(fields, key);
    Py_XDECREF(key);
    Py_XDECREF(fields);
    Py_XDECREF(type);
    return *at < 0 ? -1 : 0;
}

static int keep_rows_ready(void) /* the names, fields and dot.py's formatters, once; 0 or -1 */
{
    if (dot_format_elapsed != NULL) {
        return 0;
    }
    str_kind = PyUnicode_InternFromString("kind");
    kind_node_created = PyUnicode_InternFromString("node_created");
    kind_grad_computed = PyUnicode_InternFromString("grad_computed");
    kind_version_bumped = PyUnicode_InternFromString("version_bumped");
    kind_edge_grad = PyUnicode_InternFromString("edge_grad");
    if (str_kind == NULL || kind_node_created == NULL || kind_grad_computed == NULL ||
        kind_version_bumped == NULL || kind_edge_grad == NULL) {
        return -1;
    }
    PyObject *events_module = PyImport_ImportModule("dyngraph.events");
    if (events_module == NULL) {
        return -1;
    }
    int found = field_index(events_module, "NodeCreated", "preview", &node_preview_at) == 0 &&
                field_index(events_module, "NodeCreated", "saved_bytes", &node_saved_at) == 0 &&
                field_index(events_module, "NodeCreated", "elapsed", &node_elapsed_at) == 0 &&
                field_index(events_module, "GradComputed", "preview", &grad_preview_at) == 0 &&
                field_index(events_module, "GradComputed", "norm", &grad_norm_at) == 0 &&
                field_index(events_module, "EdgeGrad", "preview", &edge_preview_at) == 0;
    Py_DECREF(events_module);
    if (!found) {
        return -1;
    }
    saved_texts = PyDict_New();
    PyObject *dot = saved_texts == NULL ? NULL : PyImport_ImportModule("dyngraph.dot");
    if (dot == NULL) {
        return -1;
    }
    dot_format_bytes = PyObject_GetAttrString(dot, "format_bytes");
    dot_format_elapsed = dot_format_bytes == NULL ? NULL
                                                  : PyObject_GetAttrString(dot, "format_elapsed");
    Py_DECREF(dot);
    return dot_format_elapsed == NULL ? -1 : 0;
}

static PyObject *keep_rows(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 7 || !PyList_Check(args[0]) || !PySet_Check(args[1]) || !PyDict_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "keep_rows(received: list, node_ids: set, wheres: "
                                         "dict, share, node_room, room, where_index)");
        return NULL;
    }
    if (keep_rows_ready() < 0) {
        return NULL;
    }
    PyObject *received = args[0], *node_ids = args[1], *wheres = args[2], *share = args[3];
    Py_ssize_t node_room = PyLong_AsSsize_t(args[4]);
    Py_ssize_t room = PyLong_AsSsize_t(args[5]);
    Py_ssize_t where_index = PyLong_AsSsize_t(args[6]);
    if (PyErr_Occurred()) {
        return NULL;
    }
    Py_ssize_t dropped_nodes = 0, dropped_events = 0;
    TextStream texts = {NULL, 0, 0, 0, 1};
    PyObject *kept = PyList_New(0);
    if (kept == NULL) {
        return NULL;
    }
    Py_ssize_t count = PyList_GET_SIZE(received);
    for (Py_ssize_t i = 0; i < count && i < PyList_GET_SIZE(received); i++) {
        PyObject *event = PyList_GET_ITEM(received, i);
        if (!PyTuple_Check(event) || PyTuple_GET_SIZE(event) < 1) {
            PyErr_SetString(PyExc_TypeError, "keep_rows: events are tuples (events.py)");
            goto error;
        }
        Py_INCREF(event);
        PyObject *kind = PyObject_GetAttr(event, str_kind);
        PyObject *shared = NULL; /* the node's where as pages name it */
        int shown = 0; /* numbers with texts: 1 node_created, 2 grad_computed, 3 edge_grad */
        int is_node = kind == NULL ? -1 : same_kind(kind, kind_node_created);
        if (is_node < 0) {
            goto event_error;
        }
        Py_ssize_t size = PyTuple_GET_SIZE(event);
        if (is_node) {
            shown = 1;
            PyObject *id = PyTuple_GET_ITEM(event, 0);
            int known = PySet_Contains(node_ids, id);
            if (known < 0) {
                goto event_error;
            }
            if (known) {
                goto next;
            }
            if (node_room <= 0) {
                dropped_nodes++;
                goto next;
            }
            node_room--;
            if (PySet_Add(node_ids, id) < 0) {
                goto event_error;
            }
            PyObject *where = where_index < size ? PyTuple_GET_ITEM(event, where_index) : Py_None;
            if (where != Py_None) {
                shared = PyDict_GetItemWithError(wheres, where); /* borrowed */
                if (shared != NULL) {
                    Py_INCREF(shared);
                } else {
                    if (PyErr_Occurred()) {
                        goto event_error;
                    }
                    shared = PyObject_CallOneArg(share, where);
                    if (shared == NULL || PyDict_SetItem(wheres, where, shared) < 0) {
                        goto event_error;
                    }
                }
            }
        } else {
            int is_grad = same_kind(kind, kind_grad_computed);
            int by_id = is_grad;
            if (by_id == 0) {
                by_id = same_kind(kind, kind_version_bumped);
            }
            if (by_id < 0) {
                goto event_error;
            }
            if (by_id) {
                shown = is_grad ? 2 : 0;
                int known = PySet_Contains(node_ids, PyTuple_GET_ITEM(event, 0));
                if (known < 0) {
                    goto event_error;
                }
                if (!known) {
                    goto next;
                }
            } else {
                int is_edge = same_kind(kind, kind_edge_grad);
                if (is_edge < 0) {
                    goto event_error;
                }
                shown = is_edge ? 3 : 0;
                if (is_edge && size >= 2) {
                    int known = PySet_Contains(node_ids, PyTuple_GET_ITEM(event, 0));
                    if (known > 0) {
                        known = PySet_Contains(node_ids, PyTuple_GET_ITEM(event, 1));
                    }
                    if (known < 0) {
                        goto event_error;
                    }
                    if (!known) {
                        goto next;
                    }
                }
            }
        }
        if (room <= 0) {
            dropped_events++;
            goto next;
        }
        room--;
        /* a plain tuple of the event's items (shared in place of where); the texts apart */
        PyObject *row = PyTuple_New(size);
        if (row == NULL) {
            goto event_error;
        }
        for (Py_ssize_t k = 0; k < size; k++) {
            PyObject *item = PyTuple_GET_ITEM(event, k);
            PyTuple_SET_ITEM(row, k, Py_NewRef(k == where_index && shared ? shared : item));
        }
        if (shown && put_display_texts(&texts, shown, event) < 0) {
            Py_DECREF(row);
            goto event_error;
        }
        PyObject *pair = PyTuple_Pack(2, kind, row);
        Py_DECREF(row);
        if (pair == NULL || PyList_Append(kept, pair) < 0) {
            Py_XDECREF(pair);
            goto event_error;
        }
        Py_DECREF(pair);
    next:
        Py_XDECREF(shared);
        Py_XDECREF(kind);
        Py_DECREF(event);
        continue;
    event_error:
        Py_XDECREF(shared);
        Py_XDECREF(kind);
        Py_DECREF(event);
        goto error;
    }
    PyObject *text = stream_str(&texts);
    PyMem_Free(texts.data);
    if (text == NULL) {
        Py_DECREF(kept);
        return NULL;
    }
    return Py_BuildValue("NNnnnn", kept, text, node_room, room, dropped_nodes, dropped_events);
error:
    PyMem_Free(texts.data);
    Py_DECREF(kept);
    return NULL;
}

static PyObject *configure_emit(PyObject *module, PyObject *args)
{
    PyObject *globals, *drop_function, *edge_grad, *grad_computed, *node_created;
    if (!PyArg_ParseTuple(args, "O!OO!O!O!", &PyDict_Type, &globals, &drop_function,
                          &PyType_Type, &edge_grad, &PyType_Type, &grad_computed, &PyType_Type,
                          &node_created)) {
        return NULL;
    }
    if (!PyType_IsSubtype((PyTypeObject *)edge_grad, &PyTuple_Type) ||
        !PyType_IsSubtype((PyTypeObject *)grad_computed, &PyTuple_Type) ||
        !PyType_IsSubtype((PyTypeObject *)node_created, &PyTuple_Type)) {
        PyErr_SetString(PyExc_TypeError, "configure_emit: the event classes must be tuples");
        return NULL;
    }
    Py_XSETREF(edge_grad_type, Py_NewRef(edge_grad));
    Py_XSETREF(grad_computed_type, Py_NewRef(grad_computed));
    Py_XSETREF(node_created_type, Py_NewRef(node_created));
    if (str_shape == NULL) {
        str_shape = PyUnicode_InternFromString("shape");
        str_dtype = PyUnicode_InternFromString("dtype");
        str_cpu = PyUnicode_InternFromString("cpu");
        name_dtype_names = PyUnicode_InternFromString("_dtype_names");
        name_dtype_name = PyUnicode_InternFromString("dtype_name");
        name_recomputing = PyUnicode_InternFromString("recomputing");
        name_backend = PyUnicode_InternFromString("backend");
        if (str_shape == NULL || str_dtype == NULL || str_cpu == NULL ||
            name_dtype_names == NULL || name_dtype_name == NULL ||
            name_recomputing == NULL || name_backend == NULL) {
            return NULL;
        }
    }
    if (name_active == NULL) {
        name_active = PyUnicode_InternFromString("active");
        name_dispatching = PyUnicode_InternFromString("_dispatching");
        name_dispatch_order = PyUnicode_InternFromString("_dispatch_order");
        if (name_active == NULL || name_dispatching == NULL || name_dispatch_order == NULL) {
            return NULL;
        }
    }
    Py_XSETREF(events_globals, Py_NewRef(globals));
    Py_XSETREF(drop, Py_NewRef(drop_function));
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------------------ the engine's common path */

/* Function.apply and BackwardPass.propagate (dyngraph/function.py, dyngraph/autograd.py) for the
 * common case, in C. Read those: they are the definitions, and every case this code does not
 * take goes to them unchanged.
 *
 * apply takes an op whose inputs are Tensors holding numpy arrays, numpy arrays and Python
 * numbers, while no function hook is installed and anomaly mode is off; anything else (CuPy,
 * numpy scalars, more than MAX_INPUTS inputs) is handed to the readable apply before anything
 * has run. Its rare turns (forward raised, forward returned a non-array or float64, the op
 * saved an input) call the same helpers of function.py as the readable apply does, and while
 * anyone listens it announces the op with the same function.
 *
 * propagate runs the backward loop when nothing asks for the graph of the backward pass
 * (create_graph), nothing is captured (autograd.grad) and anomaly mode is off; otherwise the
 * readable loop runs. Nodes with hooks or a retained output go through the pass's own observe(),
 * and its events are the same emit_grad_computed / emit_edge_grad calls as the readable loop's.
 *
 * tests/test_speedups.py runs both on the same graphs and compares everything they produce. */

#define MAX_INPUTS 8

#define SLOT(obj, offset) (*(PyObject **)((char *)(obj) + (offset)))

static void set_slot(PyObject *obj, Py_ssize_t offset, PyObject *value) /* value: borrowed */
{
    PyObject *old = SLOT(obj, offset);
    SLOT(obj, offset) = Py_XNewRef(value);
    Py_XDECREF(old);
}

static PyTypeObject *tensor_type = NULL;   /* dyngraph.tensor.Tensor */
static PyTypeObject *function_type = NULL; /* dyngraph.function.Function */
static PyObject *numpy_module = NULL;
static PyObject *float64_dtype = NULL;     /* function._FLOAT64 */
static PyObject *readable_apply = NULL;    /* Function.apply's function: (cls, *args, **options) */
static PyObject *readable_propagate = NULL; /* BackwardPass.propagate's function: (self) */
static PyObject *function_globals = NULL, *tensor_globals = NULL;
static PyObject *grad_mode_globals = NULL, *anomaly_globals = NULL;
static PyObject *new_node_id = NULL;       /* tensor.new_node_id */
static PyObject *needs_patterns = NULL;    /* function._NEEDS_PATTERNS */
static PyObject *output_marker = NULL;     /* function._OUTPUT */
static PyObject *explain_failure = NULL, *as_output_array = NULL, *promote_like_torch = NULL;
static PyObject *announce_tensor = NULL;   /* function.announce_tensor */
static PyObject *announce_constant = NULL; /* function._announce_constant */
static PyObject *remember_saved_helper = NULL; /* function._remember_saved_versions */
static PyObject *empty_tuple = NULL;
static PyTypeObject *saved_source_type = NULL; /* function.SavedSource */
static PyObject *output_only = NULL; /* (SavedSource(0, _OUTPUT, 0),): forward saved its output */
static PyObject *in_dtype = NULL, *sum_to_shape = NULL, *raise_wrong_count = NULL;
static PyObject *str_enabled = NULL, *str_hooks = NULL, *str_inplace_clock = NULL;
static PyObject *str_timing_enabled = NULL, *str_forward = NULL, *str_backward = NULL;
static PyObject *str_sets_dtype = NULL, *str_value = NULL, *str_retained = NULL;
static PyObject *str_module = NULL, *str_dyngraph_prefix = NULL, *str_observe = NULL;
static PyObject *str_grads = NULL, *str_fanned_in = NULL, *str_wanted = NULL;
static PyObject *str_retain_graph = NULL, *str_create_graph = NULL, *str_freed = NULL;
static PyObject *str_array = NULL, *str_id_attr = NULL, *function_hooks_name = NULL;
static PyObject *str_scope = NULL, *str_epoch = NULL, *str_is_parameter = NULL;
static PyObject *str_target = NULL, *str_name_attr = NULL, *str_nbytes = NULL;
static PyObject *str_xp = NULL, *str_asarray = NULL;

/* function._NEEDS_PATTERNS's tuples, by number of inputs and needs as bits (input i: bit i). */
static PyObject *shared_patterns[MAX_INPUTS + 1][1 << MAX_INPUTS];

/* Slot offsets of Tensor (t_*) and Function (f_*), read from their member descriptors. */
static Py_ssize_t t_array, t_requires_grad, t_grad_fn, t_grad, t_name, t_id, t_counter,
    t_announced, t_hooks;
static Py_ssize_t f_parents, f_xp, f_id, f_shape, f_dtype, f_needs, f_saved, f_sources, f_clock;

static int engine_configured(void)
{
    if (readable_apply == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "dyngraph._speedups: call configure_engine() first "
                                            "(importing dyngraph does)");
        return 0;
    }
    return 1;
}

/* A module global's truth value (0 or 1), or -1 with an error. A missing name is false. */
static int global_is_true(PyObject *globals, PyObject *name)
{
    PyObject *value = PyDict_GetItemWithError(globals, name); /* borrowed */
    if (value == NULL) {
        return PyErr_Occurred() ? -1 : 0;
    }
    if (value == Py_True) {
        return 1;
    }
    if (value == Py_False || value == Py_None) {
        return 0;
    }
    return PyObject_IsTrue(value);
}

/* tensor.wrap_output(data, grad_fn): a new Tensor around an array; grad_fn may be NULL. */
static PyObject *wrap_output(PyObject *data, PyObject *grad_fn)
{
    PyObject *id;
    if (grad_fn == NULL) {
        id = PyObject_CallNoArgs(new_node_id);
        if (id == NULL) {
            return NULL;
        }
    }
    else {
        id = Py_NewRef(SLOT(grad_fn, f_id));
    }
    PyObject *tensor = tensor_type->tp_alloc(tensor_type, 0);
    if (tensor == NULL) {
        Py_DECREF(id);
        return NULL;
    }
    SLOT(tensor, t_array) = Py_NewRef(data);
    SLOT(tensor, t_requires_grad) = Py_NewRef(grad_fn == NULL ? Py_False : Py_True);
    SLOT(tensor, t_grad_fn) = Py_NewRef(grad_fn == NULL ? Py_None : grad_fn);
    SLOT(tensor, t_grad) = Py_NewRef(Py_None);
    SLOT(tensor, t_name) = Py_NewRef(Py_None);
    SLOT(tensor, t_id) = id;
    SLOT(tensor, t_counter) = Py_NewRef(Py_None);
    SLOT(tensor, t_announced) = PyLong_FromLong(0);
    SLOT(tensor, t_hooks) = Py_NewRef(Py_None);
    return tensor;
}

/* The except clause around forward in apply: a built-in op's error becomes a learner-readable
   one (function._explain_failure), raised "from None"; a custom op's error is left as it is. */
static void explain_forward_failure(PyObject *cls, PyObject *const *inputs, Py_ssize_t n)
{
    if (!PyErr_ExceptionMatches(PyExc_Exception)) {
        return;
    }
    PyObject *module_name = PyObject_GetAttr(cls, str_module);
    if (module_name == NULL) {
        return; /* (the new error replaces the op's) */
    }
    int ours = PyUnicode_Check(module_name) &&
               PyUnicode_Tailmatch(module_name, str_dyngraph_prefix, 0, PY_SSIZE_T_MAX, -1) == 1;
    Py_DECREF(module_name);
    if (!ours) {
        return;
    }
    PyObject *type, *exc, *traceback;
    PyErr_Fetch(&type, &exc, &traceback);
    PyErr_NormalizeException(&type, &exc, &traceback);
    if (traceback != NULL && exc != NULL) {
        PyException_SetTraceback(exc, traceback);
    }
    PyObject *arrays = PyList_New(n);
    PyObject *explained = NULL;
    if (arrays != NULL) {
        for (Py_ssize_t i = 0; i < n; i++) {
            PyList_SET_ITEM(arrays, i, Py_NewRef(inputs[i]));
        }
        explained = PyObject_CallFunctionObjArgs(explain_failure, cls, arrays,
                                                 exc == NULL ? Py_None : exc, NULL);
        Py_DECREF(arrays);
    }
    if (explained == NULL || !PyTuple_Check(explained) || PyTuple_GET_SIZE(explained) != 2) {
        if (explained != NULL) {
            Py_DECREF(explained);
            PyErr_SetString(PyExc_TypeError, "_explain_failure must return (type, message)");
        }
        Py_XDECREF(type);
        Py_XDECREF(exc);
        Py_XDECREF(traceback);
        return;
    }
    /* raise error_type(message) from None: the op's error stays the context, suppressed */
    PyObject *error = PyObject_CallOneArg(PyTuple_GET_ITEM(explained, 0),
                                          PyTuple_GET_ITEM(explained, 1));
    Py_DECREF(explained);
    if (error != NULL) {
        if (exc != NULL) {
            PyException_SetContext(error, Py_NewRef(exc));
        }
        PyException_SetCause(error, NULL); /* sets __suppress_context__ */
        PyErr_SetObject((PyObject *)Py_TYPE(error), error);
        Py_DECREF(error);
    }
    Py_XDECREF(type);
    Py_XDECREF(exc);
    Py_XDECREF(traceback);
}

/* function._remember_saved_versions(ctx, args, arrays, out), for a tuple of saved arrays. */
static int remember_saved_versions(PyObject *ctx, PyObject *saved, PyObject *const *args,
                                   PyObject *const *inputs, Py_ssize_t n, PyObject *out)
{
    Py_ssize_t count = PyTuple_GET_SIZE(saved);
    if (count == 1 && PyTuple_GET_ITEM(saved, 0) == out) { /* the output alone: one shared */
        set_slot(ctx, f_sources, output_only);
        goto clock;
    }
    PyObject *sources = PyList_New(0);
    if (sources == NULL) {
        return -1;
    }
    for (Py_ssize_t position = 0; position < count; position++) {
        PyObject *array = PyTuple_GET_ITEM(saved, position);
        PyObject *source = NULL, *version = NULL;
        if (array == Py_None) {
            continue;
        }
        if (array == out) {
            source = output_marker;
            version = PyLong_FromLong(0);
        }
        else {
            for (Py_ssize_t i = 0; i < n; i++) {
                if (inputs[i] == array && args[i] != array) { /* it came from this input Tensor */
                    PyObject *counter = SLOT(args[i], t_counter);
                    source = args[i];
                    version = counter == NULL || counter == Py_None
                                  ? PyLong_FromLong(0)
                                  : PyObject_GetAttr(counter, str_value);
                    break;
                }
            }
            if (source == NULL) {
                continue; /* made inside forward: nobody else can change it */
            }
        }
        PyObject *position_number = PyLong_FromSsize_t(position);
        PyObject *record = NULL; /* SavedSource(position, tensor, version) */
        if (version != NULL && position_number != NULL) {
            record = saved_source_type->tp_alloc(saved_source_type, 3);
        }
        if (record == NULL) {
            Py_XDECREF(version);
            Py_XDECREF(position_number);
            Py_DECREF(sources);
            return -1;
        }
        PyTuple_SET_ITEM(record, 0, position_number);
        PyTuple_SET_ITEM(record, 1, Py_NewRef(source));
        PyTuple_SET_ITEM(record, 2, version);
        int appended = PyList_Append(sources, record);
        Py_DECREF(record);
        if (appended < 0) {
            Py_DECREF(sources);
            return -1;
        }
    }
    PyObject *records = PyList_AsTuple(sources);
    Py_DECREF(sources);
    if (records == NULL) {
        return -1;
    }
    set_slot(ctx, f_sources, records);
    Py_DECREF(records);
clock:;
    PyObject *clock = PyDict_GetItemWithError(tensor_globals, str_inplace_clock); /* borrowed */
    if (clock == NULL) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_RuntimeError, "tensor.inplace_clock is missing");
        }
        return -1;
    }
    set_slot(ctx, f_clock, clock);
    return 0;
}

/* Should apply hand this call to the readable definition before looking at the inputs? While a
   function hook is installed, in anomaly mode, or while events time each op. 1, 0, -1. */
static int apply_is_observed(void)
{
    int observed = global_is_true(function_globals, function_hooks_name);
    if (observed == 0) {
        observed = global_is_true(anomaly_globals, str_enabled);
    }
    if (observed == 0 && global_is_true(events_globals, name_active) == 1) {
        observed = global_is_true(events_globals, str_timing_enabled);
    }
    return observed;
}

static PyObject *where_from_stack(PyObject *module, PyObject *const *args, Py_ssize_t nargs);
static PyObject *emit_op_created(PyObject *module, PyObject *const *args, Py_ssize_t nargs);

/* function._announce_op(ctx, args, tensor, None), called by apply, which has no Python frame of
   its own: the learner's line is found from our caller's frame on. 0, or -1 with an error. */
static int announce(PyObject *module, PyObject *ctx, PyObject *const *inputs, Py_ssize_t n,
                    PyObject *tensor)
{
    PyObject *where_args[2] = {NULL, Py_True};
    where_args[0] = PyLong_FromLong(1);
    if (where_args[0] == NULL) {
        return -1;
    }
    PyObject *where = where_from_stack(module, where_args, 2); /* named: h in h = x * w */
    Py_DECREF(where_args[0]);
    if (where == NULL) {
        return -1;
    }
    PyObject *scope = PyDict_GetItemWithError(events_globals, str_scope); /* borrowed */
    PyObject *epoch = scope == NULL ? NULL : PyDict_GetItemWithError(events_globals, str_epoch);
    PyObject *input_ids = PyTuple_New(n);
    if (epoch == NULL || input_ids == NULL) {
        if (epoch == NULL && !PyErr_Occurred()) {
            PyErr_SetString(PyExc_RuntimeError, "events._scope or events.epoch is missing");
        }
        goto fail;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *arg = inputs[i];
        PyObject *id;
        if (PyObject_TypeCheck(arg, tensor_type)) {
            PyObject *announced = SLOT(arg, t_announced);
            int told = announced == epoch ? 1
                       : announced == NULL ? 0
                                           : PyObject_RichCompareBool(announced, epoch, Py_EQ);
            if (told < 0) {
                goto fail;
            }
            if (!told) { /* made before anyone listened: a parameter belongs to its module */
                PyObject *is_parameter = PyObject_GetAttr(arg, str_is_parameter);
                int parameter = is_parameter == NULL ? -1 : PyObject_IsTrue(is_parameter);
                Py_XDECREF(is_parameter);
                if (parameter < 0) {
                    goto fail;
                }
                PyObject *done = PyObject_CallFunctionObjArgs(
                    announce_tensor, arg, where, parameter ? scope : empty_tuple, NULL);
                if (done == NULL) {
                    goto fail;
                }
                Py_DECREF(done);
            }
            id = Py_NewRef(SLOT(arg, t_id));
        }
        else {
            id = PyObject_CallFunctionObjArgs(announce_constant, arg, where, scope, NULL);
            if (id == NULL) {
                goto fail;
            }
        }
        PyTuple_SET_ITEM(input_ids, i, id);
    }
    set_slot(tensor, t_announced, epoch);
    long long saved_bytes = 0;
    PyObject *saved = SLOT(ctx, f_saved);
    if (saved != NULL && PyTuple_Check(saved)) {
        for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(saved); k++) {
            PyObject *array = PyTuple_GET_ITEM(saved, k);
            if (array == Py_None) {
                continue;
            }
            if (Py_TYPE(array) == &PyArray_Type) {
                saved_bytes += (long long)PyArray_NBYTES((PyArrayObject *)array);
                continue;
            }
            PyObject *nbytes = PyObject_GetAttr(array, str_nbytes); /* getattr(a, "nbytes", 0) */
            if (nbytes == NULL) {
                if (!PyErr_ExceptionMatches(PyExc_AttributeError)) {
                    goto fail;
                }
                PyErr_Clear();
                continue;
            }
            long long size = PyLong_AsLongLong(nbytes);
            Py_DECREF(nbytes);
            if (size == -1 && PyErr_Occurred()) {
                goto fail;
            }
            saved_bytes += size;
        }
    }
    PyObject *name = where == Py_None ? Py_NewRef(Py_None) : PyObject_GetAttr(where, str_target);
    PyObject *op = PyObject_GetAttr((PyObject *)Py_TYPE(ctx), str_name_attr);
    PyObject *bytes = PyLong_FromLongLong(saved_bytes);
    PyObject *done = NULL;
    if (name != NULL && op != NULL && bytes != NULL) {
        PyObject *fields[9] = {SLOT(tensor, t_id), op, input_ids, SLOT(tensor, t_array), name,
                               scope, where, bytes, Py_None};
        done = emit_op_created(module, fields, 9);
    }
    Py_XDECREF(name);
    Py_XDECREF(op);
    Py_XDECREF(bytes);
    if (done == NULL) {
        goto fail;
    }
    Py_DECREF(done);
    Py_DECREF(input_ids);
    Py_DECREF(where);
    return 0;

fail:
    Py_XDECREF(input_ids);
    Py_DECREF(where);
    return -1;
}

static int has_shape(PyObject *array, PyObject *shape);

/* Function.apply(cls, *args, **options), installed as a classmethod. */
static PyObject *engine_apply(PyObject *module, PyObject *const *args, size_t nargsf,
                              PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (!engine_configured()) {
        return NULL;
    }
    if (nargs < 1) {
        PyErr_SetString(PyExc_TypeError, "apply() needs the op class");
        return NULL;
    }
    PyObject *cls = args[0];
    Py_ssize_t n = nargs - 1; /* the op's positional inputs: args[1..n] */
    Py_ssize_t n_options = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
    int observed = apply_is_observed();
    if (observed < 0) {
        return NULL;
    }
    if (observed || n > MAX_INPUTS || n_options > MAX_INPUTS) {
        return PyObject_Vectorcall(readable_apply, args, nargs, kwnames);
    }

    /* forward's arguments: stack[0] is ctx, then one array or number per input, then the
       options' values (their names are kwnames) */
    PyObject *stack[1 + 2 * MAX_INPUTS];
    PyObject *parents[MAX_INPUTS];
    PyObject *const *inputs = args + 1;
    int needs[MAX_INPUTS];
    int requires_grad = 0;
    PyTypeObject *array_type = NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *arg = inputs[i];
        if (PyObject_TypeCheck(arg, tensor_type)) {
            PyObject *data = SLOT(arg, t_array);
            PyObject *flag = SLOT(arg, t_requires_grad);
            PyObject *grad_fn = SLOT(arg, t_grad_fn);
            if (data == NULL || grad_fn == NULL || (flag != Py_True && flag != Py_False) ||
                Py_TYPE(data) != &PyArray_Type) {
                return PyObject_Vectorcall(readable_apply, args, nargs, kwnames);
            }
            array_type = &PyArray_Type;
            stack[1 + i] = data;
            needs[i] = flag == Py_True;
            parents[i] = !needs[i] ? Py_None : grad_fn != Py_None ? grad_fn : arg;
            requires_grad |= needs[i];
        }
        else if (PyFloat_CheckExact(arg) || PyLong_CheckExact(arg) || PyBool_Check(arg) ||
                 Py_TYPE(arg) == &PyArray_Type) {
            stack[1 + i] = arg; /* a Python number, or a constant numpy array */
            needs[i] = 0;
            parents[i] = Py_None;
            if (Py_TYPE(arg) == &PyArray_Type) {
                array_type = &PyArray_Type;
            }
        }
        else { /* a numpy scalar, a CuPy array, anything else: the readable apply */
            return PyObject_Vectorcall(readable_apply, args, nargs, kwnames);
        }
    }
    for (Py_ssize_t k = 0; k < n_options; k++) {
        stack[1 + n + k] = args[nargs + k];
    }
    int record = 0;
    if (requires_grad) {
        record = global_is_true(grad_mode_globals, str_enabled);
        if (record < 0) {
            return NULL;
        }
    }

    PyObject *ctx = PyObject_CallNoArgs(cls);
    if (ctx == NULL) {
        return NULL;
    }
    PyObject *parent_tuple = PyTuple_New(n);
    PyObject *needs_tuple = NULL;
    if (parent_tuple == NULL) {
        goto fail_tuples;
    }
    int pattern = 0; /* the needs as bits: the shared tuple of function._shared_pattern */
    for (Py_ssize_t i = 0; i < n; i++) {
        PyTuple_SET_ITEM(parent_tuple, i, Py_NewRef(parents[i]));
        pattern |= needs[i] << i;
    }
    PyObject *shared = shared_patterns[n][pattern]; /* borrowed */
    if (shared == NULL) {
        needs_tuple = PyTuple_New(n);
        if (needs_tuple == NULL) {
            goto fail_tuples;
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            PyTuple_SET_ITEM(needs_tuple, i, Py_NewRef(needs[i] ? Py_True : Py_False));
        }
        shared = PyDict_SetDefault(needs_patterns, needs_tuple, needs_tuple); /* borrowed */
        if (shared == NULL) {
            goto fail_tuples;
        }
        shared_patterns[n][pattern] = Py_NewRef(shared);
    }
    set_slot(ctx, f_xp, numpy_module);
    set_slot(ctx, f_parents, parent_tuple);
    set_slot(ctx, f_needs, shared);
    set_slot(ctx, f_saved, empty_tuple);
    Py_CLEAR(parent_tuple);
    Py_CLEAR(needs_tuple);

    PyObject *forward = PyObject_GetAttr(cls, str_forward);
    if (forward == NULL) {
        Py_DECREF(ctx);
        return NULL;
    }
    stack[0] = ctx;
    PyObject *out = PyObject_Vectorcall(forward, stack, 1 + n, kwnames);
    Py_DECREF(forward);
    if (out == NULL) {
        explain_forward_failure(cls, stack + 1, n);
        Py_DECREF(ctx);
        return NULL;
    }
    if (array_type == NULL || Py_TYPE(out) != array_type) {
        Py_SETREF(out, PyObject_CallFunctionObjArgs(as_output_array, cls, numpy_module, out, NULL));
        if (out == NULL) {
            Py_DECREF(ctx);
            return NULL;
        }
    }
    PyObject *dtype = Py_TYPE(out) == &PyArray_Type
                          ? Py_NewRef((PyObject *)PyArray_DESCR((PyArrayObject *)out))
                          : PyObject_GetAttr(out, str_dtype);
    if (dtype == NULL) {
        goto fail_out;
    }
    if (dtype == float64_dtype) {
        PyObject *sets_dtype = PyObject_GetAttr(cls, str_sets_dtype);
        int keep = sets_dtype == NULL ? -1 : PyObject_IsTrue(sets_dtype);
        Py_XDECREF(sets_dtype);
        if (keep < 0) {
            Py_DECREF(dtype);
            goto fail_out;
        }
        if (!keep) {
            PyObject *arrays = PyList_New(n);
            if (arrays == NULL) {
                Py_DECREF(dtype);
                goto fail_out;
            }
            for (Py_ssize_t i = 0; i < n; i++) {
                PyList_SET_ITEM(arrays, i, Py_NewRef(stack[1 + i]));
            }
            Py_SETREF(out, PyObject_CallFunctionObjArgs(promote_like_torch, cls, arrays, out, NULL));
            Py_DECREF(arrays);
            Py_DECREF(dtype);
            if (out == NULL) {
                Py_DECREF(ctx);
                return NULL;
            }
            dtype = PyObject_GetAttr(out, str_dtype);
            if (dtype == NULL) {
                goto fail_out;
            }
        }
    }
    if (!record) {
        Py_DECREF(dtype);
        Py_DECREF(ctx);
        PyObject *tensor = wrap_output(out, NULL);
        Py_DECREF(out);
        return tensor;
    }

    PyObject *id = PyObject_CallNoArgs(new_node_id);
    PyObject *shape = NULL; /* an input node's shape tuple when equal (elementwise ops): no new one */
    for (Py_ssize_t i = 0; i < n && shape == NULL && Py_TYPE(out) == &PyArray_Type; i++) {
        PyObject *parent = parents[i];
        if (parent != Py_None && Py_TYPE(parent) != tensor_type &&
            PyObject_TypeCheck(parent, function_type)) {
            PyObject *parent_shape = SLOT(parent, f_shape);
            int same = parent_shape == NULL ? 0 : has_shape(out, parent_shape);
            if (same < 0) {
                PyErr_Clear();
            }
            else if (same) {
                shape = Py_NewRef(parent_shape);
            }
        }
    }
    if (shape == NULL) {
        shape = PyObject_GetAttr(out, str_shape);
    }
    if (id == NULL || shape == NULL) {
        Py_XDECREF(id);
        Py_XDECREF(shape);
        Py_DECREF(dtype);
        goto fail_out;
    }
    set_slot(ctx, f_id, id);
    set_slot(ctx, f_shape, shape);
    set_slot(ctx, f_dtype, dtype);
    Py_DECREF(id);
    Py_DECREF(shape);
    Py_DECREF(dtype);
    PyObject *tensor = wrap_output(out, ctx);
    Py_DECREF(out);
    if (tensor == NULL) {
        Py_DECREF(ctx);
        return NULL;
    }
    PyObject *saved = SLOT(ctx, f_saved);
    int has_saved = saved == NULL ? 0 : PyObject_IsTrue(saved);
    if (has_saved < 0) {
        goto fail_tensor;
    }
    if (has_saved) {
        if (PyTuple_Check(saved)) {
            if (remember_saved_versions(ctx, saved, inputs, stack + 1, n,
                                        SLOT(tensor, t_array)) < 0) {
                goto fail_tensor;
            }
        }
        else { /* forward set ctx.saved_arrays itself: the readable helper takes any sequence */
            PyObject *arg_tuple = PyTuple_New(n), *arrays = PyList_New(n);
            PyObject *done = NULL;
            if (arg_tuple != NULL && arrays != NULL) {
                for (Py_ssize_t i = 0; i < n; i++) {
                    PyTuple_SET_ITEM(arg_tuple, i, Py_NewRef(inputs[i]));
                    PyList_SET_ITEM(arrays, i, Py_NewRef(stack[1 + i]));
                }
                done = PyObject_CallFunctionObjArgs(remember_saved_helper, ctx, arg_tuple, arrays,
                                                    SLOT(tensor, t_array), NULL);
            }
            Py_XDECREF(arg_tuple);
            Py_XDECREF(arrays);
            if (done == NULL) {
                goto fail_tensor;
            }
            Py_DECREF(done);
        }
    }
    int active = global_is_true(events_globals, name_active);
    if (active < 0) {
        goto fail_tensor;
    }
    if (active && announce(module, ctx, inputs, n, tensor) < 0) {
        goto fail_tensor;
    }
    Py_DECREF(ctx);
    return tensor;

fail_tensor:
    Py_DECREF(tensor);
    Py_DECREF(ctx);
    return NULL;
fail_out:
    Py_DECREF(out);
    Py_DECREF(ctx);
    return NULL;
fail_tuples:
    Py_XDECREF(parent_tuple);
    Py_XDECREF(needs_tuple);
    Py_DECREF(ctx);
    return NULL;
}

/* The pending nodes of a backward pass: a max-heap on the node id, as the readable loop's
   heapq of (-id, node). */
typedef struct {
    long long id;
    PyObject *node; /* a strong reference */
} Pending;

typedef struct {
    Pending *items;
    Py_ssize_t size, capacity;
} Heap;

static int heap_push(Heap *heap, PyObject *node)
{
    long long id = PyLong_AsLongLong(SLOT(node, f_id));
    if (id == -1 && PyErr_Occurred()) {
        return -1;
    }
    if (heap->size == heap->capacity) {
        Py_ssize_t capacity = heap->capacity == 0 ? 64 : 2 * heap->capacity;
        Pending *items = PyMem_Realloc(heap->items, (size_t)capacity * sizeof(Pending));
        if (items == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        heap->items = items;
        heap->capacity = capacity;
    }
    Py_ssize_t i = heap->size++;
    while (i > 0) { /* sift up */
        Py_ssize_t parent = (i - 1) / 2;
        if (heap->items[parent].id >= id) {
            break;
        }
        heap->items[i] = heap->items[parent];
        i = parent;
    }
    heap->items[i].id = id;
    heap->items[i].node = Py_NewRef(node);
    return 0;
}

static PyObject *heap_pop(Heap *heap) /* the newest node, a strong reference */
{
    PyObject *node = heap->items[0].node;
    Pending last = heap->items[--heap->size];
    Py_ssize_t i = 0;
    for (;;) { /* sift down */
        Py_ssize_t child = 2 * i + 1;
        if (child >= heap->size) {
            break;
        }
        if (child + 1 < heap->size && heap->items[child + 1].id > heap->items[child].id) {
            child++;
        }
        if (heap->items[child].id <= last.id) {
            break;
        }
        heap->items[i] = heap->items[child];
        i = child;
    }
    if (heap->size > 0) {
        heap->items[i] = last;
    }
    return node;
}

static void heap_clear(Heap *heap)
{
    for (Py_ssize_t i = 0; i < heap->size; i++) {
        Py_DECREF(heap->items[i].node);
    }
    PyMem_Free(heap->items);
}

/* Is ``shape`` (a tuple) the shape of ``array``? 1, 0, -1 with an error. */
static int has_shape(PyObject *array, PyObject *shape)
{
    if (Py_TYPE(array) == &PyArray_Type && PyTuple_CheckExact(shape)) {
        PyArrayObject *a = (PyArrayObject *)array;
        int ndim = PyArray_NDIM(a);
        if (PyTuple_GET_SIZE(shape) != ndim) {
            return 0;
        }
        npy_intp *dims = PyArray_DIMS(a);
        for (int d = 0; d < ndim; d++) {
            PyObject *item = PyTuple_GET_ITEM(shape, d);
            if (!PyLong_CheckExact(item)) {
                goto generic;
            }
            long long n = PyLong_AsLongLong(item);
            if (n == -1 && PyErr_Occurred()) {
                return -1;
            }
            if (n != (long long)dims[d]) {
                return 0;
            }
        }
        return 1;
    }
generic:;
    PyObject *own = PyObject_GetAttr(array, str_shape);
    if (own == NULL) {
        return -1;
    }
    int equal = PyObject_RichCompareBool(own, shape, Py_EQ);
    Py_DECREF(own);
    return equal;
}

/* Do two arrays have the same shape and the same dtype? */
static int same_layout(PyArrayObject *a, PyArrayObject *b)
{
    int ndim = PyArray_NDIM(a);
    if (ndim != PyArray_NDIM(b) || !PyArray_EquivTypes(PyArray_DESCR(a), PyArray_DESCR(b))) {
        return 0;
    }
    for (int d = 0; d < ndim; d++) {
        if (PyArray_DIMS(a)[d] != PyArray_DIMS(b)[d]) {
            return 0;
        }
    }
    return 1;
}

static PyObject *emit_grad_computed(PyObject *module, PyObject *const *args, Py_ssize_t nargs);
static PyObject *emit_edge_grad(PyObject *module, PyObject *const *args, Py_ssize_t nargs);

/* One node's turn in the loop: its gradient g (a new reference, consumed) goes through the op's
   backward, and each input gradient into its parent's running sum. 0, or -1 with an error. */
static int run_node(PyObject *module, PyObject *pass, PyObject *node, PyObject *g, PyObject *grads,
                    PyObject *fanned_in, int retain_graph, PyObject *freed, Heap *pending)
{
    PyObject *input_grads = NULL;
    PyObject *node_dtype = SLOT(node, f_dtype);
    PyObject *g_dtype = Py_TYPE(g) == &PyArray_Type
                            ? Py_NewRef((PyObject *)PyArray_DESCR((PyArrayObject *)g))
                            : PyObject_GetAttr(g, str_dtype);
    if (g_dtype == NULL) {
        goto fail;
    }
    if (g_dtype != node_dtype) { /* NOTE [gradient dtype] in autograd.py */
        int differ = PyObject_RichCompareBool(g_dtype, node_dtype, Py_NE);
        if (differ < 0) {
            Py_DECREF(g_dtype);
            goto fail;
        }
        if (differ) {
            Py_SETREF(g, PyObject_CallFunctionObjArgs(in_dtype, g, node_dtype, NULL));
        }
    }
    Py_DECREF(g_dtype);
    if (g == NULL) {
        goto fail;
    }
    PyObject *hooks = PyObject_GetAttr(node, str_hooks);
    PyObject *retained = hooks == NULL ? NULL : PyObject_GetAttr(node, str_retained);
    int observe = retained == NULL ? -1 : retained != Py_None ? 1 : PyObject_IsTrue(hooks);
    Py_XDECREF(hooks);
    Py_XDECREF(retained);
    if (observe < 0) {
        goto fail;
    }
    if (observe) {
        Py_SETREF(g, PyObject_CallMethodObjArgs(pass, str_observe, node, g, NULL));
        if (g == NULL) {
            goto fail;
        }
    }
    int active = global_is_true(events_globals, name_active);
    if (active < 0) {
        goto fail;
    }
    PyObject *node_id = SLOT(node, f_id);
    if (active) {
        int accumulated = PySet_Contains(fanned_in, node);
        if (accumulated < 0) {
            goto fail;
        }
        PyObject *data = PyObject_TypeCheck(g, tensor_type) ? SLOT(g, t_array) : g;
        PyObject *call[3] = {node_id, data, accumulated ? Py_True : Py_False};
        PyObject *done = emit_grad_computed(module, call, 3);
        if (done == NULL) {
            goto fail;
        }
        Py_DECREF(done);
    }

    PyObject *backward = PyObject_GetAttr(node, str_backward);
    if (backward == NULL) {
        goto fail;
    }
    PyObject *call[2] = {node, g};
    input_grads = PyObject_Vectorcall(backward, call, 2, NULL);
    Py_DECREF(backward);
    if (input_grads == NULL) {
        goto fail;
    }
    if (!PyTuple_CheckExact(input_grads)) {
        Py_SETREF(input_grads, PyTuple_Pack(1, input_grads));
        if (input_grads == NULL) {
            goto fail;
        }
    }
    PyObject *parents = SLOT(node, f_parents);
    if (!PyTuple_CheckExact(parents) || PyTuple_GET_SIZE(input_grads) != PyTuple_GET_SIZE(parents)) {
        PyObject *raised = PyObject_CallFunctionObjArgs(raise_wrong_count, node, input_grads, NULL);
        Py_XDECREF(raised);
        if (raised != NULL) {
            PyErr_SetString(PyExc_RuntimeError, "a node's parents must be a tuple");
        }
        goto fail;
    }
    for (Py_ssize_t position = 0; position < PyTuple_GET_SIZE(parents); position++) {
        PyObject *parent = PyTuple_GET_ITEM(parents, position);
        PyObject *gi = PyTuple_GET_ITEM(input_grads, position);
        if (parent == Py_None || gi == Py_None) {
            continue;
        }
        Py_INCREF(gi);
        int parent_is_node = Py_TYPE(parent) != tensor_type && PyObject_TypeCheck(parent, function_type);
        PyObject *parent_shape = parent_is_node ? Py_NewRef(SLOT(parent, f_shape))
                                                : PyObject_GetAttr(parent, str_shape);
        int same = parent_shape == NULL ? -1 : has_shape(gi, parent_shape);
        PyObject *sent_shape = NULL; /* gi's shape as backward returned it, while anyone listens */
        if (same >= 0 && active) {
            sent_shape = PyObject_GetAttr(gi, str_shape);
            if (sent_shape == NULL) {
                same = -1;
            }
        }
        if (same == 0) {
            Py_SETREF(gi, PyObject_CallFunctionObjArgs(sum_to_shape, gi, parent_shape, node,
                                                       input_grads, NULL));
        }
        Py_XDECREF(parent_shape);
        if (same < 0 || gi == NULL) {
            Py_XDECREF(gi);
            Py_XDECREF(sent_shape);
            goto fail;
        }
        if (active) { /* NOTE [edge gradients] in events.py */
            PyObject *data = PyObject_TypeCheck(gi, tensor_type) ? SLOT(gi, t_array) : gi;
            int unchanged = has_shape(data, sent_shape);
            PyObject *position_number = PyLong_FromSsize_t(position);
            PyObject *parent_id = PyObject_GetAttr(parent, str_id_attr);
            PyObject *done = NULL;
            if (unchanged >= 0 && position_number != NULL && parent_id != NULL) {
                PyObject *edge[5] = {node_id, parent_id, position_number, data,
                                     unchanged ? Py_None : sent_shape};
                done = emit_edge_grad(module, edge, 5);
            }
            Py_XDECREF(position_number);
            Py_XDECREF(parent_id);
            Py_DECREF(sent_shape);
            if (done == NULL) {
                Py_DECREF(gi);
                goto fail;
            }
            Py_DECREF(done);
        }
        PyObject *sum_so_far = PyDict_GetItemWithError(grads, parent); /* borrowed */
        if (sum_so_far != NULL) { /* autograd.add_into_sum */
            int in_place = PySet_Contains(fanned_in, parent);
            if (in_place > 0) {
                in_place = Py_TYPE(sum_so_far) == &PyArray_Type && Py_TYPE(gi) == &PyArray_Type &&
                           same_layout((PyArrayObject *)sum_so_far, (PyArrayObject *)gi);
            }
            PyObject *sum = in_place < 0 ? NULL
                            : in_place   ? PyNumber_InPlaceAdd(sum_so_far, gi)
                                         : PyNumber_Add(sum_so_far, gi);
            Py_DECREF(gi);
            if (sum == NULL || PyDict_SetItem(grads, parent, sum) < 0 ||
                PySet_Add(fanned_in, parent) < 0) {
                Py_XDECREF(sum);
                goto fail;
            }
            Py_DECREF(sum);
        }
        else {
            int stored = PyErr_Occurred() ? -1 : PyDict_SetItem(grads, parent, gi);
            Py_DECREF(gi);
            if (stored < 0 || (parent_is_node && heap_push(pending, parent) < 0)) {
                goto fail;
            }
        }
    }
    Py_CLEAR(input_grads);
    if (!retain_graph) {
        PyObject *saved = SLOT(node, f_saved);
        int holds = saved == NULL ? 0 : PyObject_IsTrue(saved);
        if (holds < 0) {
            goto fail;
        }
        if (holds) { /* release what forward saved: the graph is freed */
            set_slot(node, f_saved, Py_None);
            if (PyList_Append(freed, node_id) < 0) {
                goto fail;
            }
        }
    }
    Py_DECREF(g);
    return 0;

fail:
    Py_XDECREF(g);
    Py_XDECREF(input_grads);
    return -1;
}

/* BackwardPass.propagate(self). */
static PyObject *engine_propagate(PyObject *module, PyObject *pass)
{
    if (!engine_configured()) {
        return NULL;
    }
    PyObject *grads = PyObject_GetAttr(pass, str_grads);
    PyObject *fanned_in = PyObject_GetAttr(pass, str_fanned_in);
    PyObject *wanted = PyObject_GetAttr(pass, str_wanted);
    PyObject *freed = PyObject_GetAttr(pass, str_freed);
    PyObject *retain = PyObject_GetAttr(pass, str_retain_graph);
    PyObject *create = PyObject_GetAttr(pass, str_create_graph);
    PyObject *result = NULL;
    Heap pending = {NULL, 0, 0};
    if (grads == NULL || fanned_in == NULL || wanted == NULL || freed == NULL || retain == NULL ||
        create == NULL) {
        goto done;
    }
    int retain_graph = PyObject_IsTrue(retain);
    int create_graph = PyObject_IsTrue(create);
    int capturing = PyObject_IsTrue(wanted);
    int anomaly = global_is_true(anomaly_globals, str_enabled);
    if (retain_graph < 0 || create_graph < 0 || capturing < 0 || anomaly < 0) {
        goto done;
    }
    if (create_graph || capturing || anomaly || !PyDict_CheckExact(grads) ||
        !PyAnySet_CheckExact(fanned_in) || !PyList_CheckExact(freed)) {
        result = PyObject_CallOneArg(readable_propagate, pass);
        goto done;
    }
    Py_ssize_t position = 0;
    PyObject *key, *value;
    while (PyDict_Next(grads, &position, &key, &value)) {
        if (PyObject_TypeCheck(key, function_type) && heap_push(&pending, key) < 0) {
            goto done;
        }
    }
    while (pending.size > 0) {
        PyObject *node = heap_pop(&pending);
        PyObject *g = PyDict_GetItemWithError(grads, node); /* grads.pop(node) */
        if (g == NULL) {
            if (!PyErr_Occurred()) {
                PyErr_SetObject(PyExc_KeyError, node);
            }
            Py_DECREF(node);
            goto done;
        }
        Py_INCREF(g);
        if (PyDict_DelItem(grads, node) < 0) {
            Py_DECREF(g);
            Py_DECREF(node);
            goto done;
        }
        int ran = run_node(module, pass, node, g, grads, fanned_in, retain_graph, freed, &pending);
        Py_DECREF(node);
        if (ran < 0) {
            goto done;
        }
    }
    result = Py_NewRef(Py_None);
done:
    heap_clear(&pending);
    Py_XDECREF(grads);
    Py_XDECREF(fanned_in);
    Py_XDECREF(wanted);
    Py_XDECREF(freed);
    Py_XDECREF(retain);
    Py_XDECREF(create);
    return result;
}

/* trace.replay_steps(plan, values, array_type): the loop of a traced graph's fast replay. Each
   step is (call, ctx, getter, out_slot): call(ctx, *getter(values)) goes into values[out_slot],
   made an array of ``array_type`` by the first ctx's xp.asarray when forward returned a number. */
static PyObject *replay_steps(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3 || !PyList_CheckExact(args[0]) || !PyList_CheckExact(args[1])) {
        PyErr_SetString(PyExc_TypeError, "replay_steps(plan: list, values: list, array_type)");
        return NULL;
    }
    PyObject *plan = args[0], *values = args[1], *array_type = args[2];
    PyObject *xp = NULL;
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(plan); k++) {
        PyObject *step = PyList_GET_ITEM(plan, k);
        if (!PyTuple_Check(step) || PyTuple_GET_SIZE(step) != 4) {
            PyErr_SetString(PyExc_TypeError, "a replay step is (call, ctx, getter, out_slot)");
            goto fail;
        }
        PyObject *call = PyTuple_GET_ITEM(step, 0), *ctx = PyTuple_GET_ITEM(step, 1);
        PyObject *arguments = PyObject_CallOneArg(PyTuple_GET_ITEM(step, 2), values);
        if (arguments == NULL) {
            goto fail;
        }
        PyObject *sequence = PySequence_Fast(arguments, "a step's arguments are a sequence");
        Py_DECREF(arguments);
        if (sequence == NULL) {
            goto fail;
        }
        Py_ssize_t n = PySequence_Fast_GET_SIZE(sequence);
        PyObject *small[1 + MAX_INPUTS];
        PyObject **stack = n < MAX_INPUTS ? small : PyMem_New(PyObject *, 1 + n);
        if (stack == NULL) {
            Py_DECREF(sequence);
            PyErr_NoMemory();
            goto fail;
        }
        stack[0] = ctx;
        for (Py_ssize_t i = 0; i < n; i++) {
            stack[1 + i] = PySequence_Fast_GET_ITEM(sequence, i);
        }
        PyObject *out = PyObject_Vectorcall(call, stack, 1 + n, NULL);
        if (stack != small) {
            PyMem_Free(stack);
        }
        Py_DECREF(sequence);
        if (out == NULL) {
            goto fail;
        }
        if ((PyObject *)Py_TYPE(out) != array_type) { /* numpy returns scalars for 0-d results */
            if (xp == NULL) {
                xp = PyObject_GetAttr(PyTuple_GET_ITEM(PyList_GET_ITEM(plan, 0), 1), str_xp);
            }
            Py_SETREF(out, xp == NULL ? NULL : PyObject_CallMethodOneArg(xp, str_asarray, out));
            if (out == NULL) {
                goto fail;
            }
        }
        Py_ssize_t slot = PyLong_AsSsize_t(PyTuple_GET_ITEM(step, 3));
        if (slot == -1 && PyErr_Occurred()) {
            Py_DECREF(out);
            goto fail;
        }
        if (PyList_SetItem(values, slot, out) < 0) { /* steals out */
            goto fail;
        }
    }
    Py_XDECREF(xp);
    Py_RETURN_NONE;
fail:
    Py_XDECREF(xp);
    return NULL;
}

/* The offset of a __slots__ member of ``type``, or -1 with an error. */
static Py_ssize_t slot_offset(PyTypeObject *type, const char *name)
{
    PyObject *descr = PyDict_GetItemString(type->tp_dict, name); /* borrowed */
    if (descr == NULL || Py_TYPE(descr) != &PyMemberDescr_Type) {
        PyErr_Format(PyExc_TypeError, "%s.%s is not a __slots__ member", type->tp_name, name);
        return -1;
    }
    PyMemberDef *member = ((PyMemberDescrObject *)descr)->d_member;
    if (member->type != T_OBJECT_EX) {
        PyErr_Format(PyExc_TypeError, "%s.%s is not an object slot", type->tp_name, name);
        return -1;
    }
    return member->offset;
}

static PyObject *configure_engine(PyObject *module, PyObject *parts)
{
    static const char *names[] = {
        "Tensor", "Function", "numpy", "float64", "apply", "propagate", "function_globals",
        "tensor_globals", "grad_mode_globals", "anomaly_globals", "new_node_id",
        "needs_patterns", "output_marker", "explain_failure", "as_output_array",
        "promote_like_torch", "announce_tensor", "announce_constant",
        "remember_saved_versions", "in_dtype",
        "sum_to_shape", "raise_wrong_count", "hooks_name", "SavedSource", NULL};
    PyObject **targets[] = {
        (PyObject **)&tensor_type, (PyObject **)&function_type, &numpy_module, &float64_dtype,
        &readable_apply, &readable_propagate, &function_globals, &tensor_globals,
        &grad_mode_globals, &anomaly_globals, &new_node_id, &needs_patterns, &output_marker,
        &explain_failure, &as_output_array, &promote_like_torch,
        &announce_tensor, &announce_constant, &remember_saved_helper, &in_dtype, &sum_to_shape,
        &raise_wrong_count, &function_hooks_name, (PyObject **)&saved_source_type};
    if (events_globals == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "call configure_emit() before configure_engine()");
        return NULL;
    }
    if (!PyDict_Check(parts)) {
        PyErr_SetString(PyExc_TypeError, "configure_engine takes a dict");
        return NULL;
    }
    PyObject *values[32];
    for (int i = 0; names[i] != NULL; i++) {
        values[i] = PyDict_GetItemString(parts, names[i]);
        if (values[i] == NULL) {
            PyErr_Format(PyExc_KeyError, "configure_engine: %s is missing", names[i]);
            return NULL;
        }
    }
    if (!PyType_Check(values[0]) || !PyType_Check(values[1]) || !PyType_Check(values[23]) ||
        !PyType_IsSubtype((PyTypeObject *)values[23], &PyTuple_Type)) {
        PyErr_SetString(PyExc_TypeError, "configure_engine: Tensor and Function must be classes, "
                                         "SavedSource a NamedTuple");
        return NULL;
    }
    PyTypeObject *tensor = (PyTypeObject *)values[0], *function = (PyTypeObject *)values[1];
    Py_ssize_t offsets[18];
    const char *tensor_slots[] = {"array", "_requires_grad", "grad_fn", "_grad", "name", "id",
                                  "_counter", "_announced", "_hooks"};
    const char *function_slots[] = {"parents", "xp", "id", "shape", "dtype",
                                    "needs_input_grad", "saved_arrays", "_saved_sources",
                                    "_inplace_clock"};
    for (int i = 0; i < 9; i++) {
        offsets[i] = slot_offset(tensor, tensor_slots[i]);
        offsets[9 + i] = slot_offset(function, function_slots[i]);
        if (offsets[i] < 0 || offsets[9 + i] < 0) {
            return NULL;
        }
    }
    Py_ssize_t *tensor_offsets[] = {&t_array, &t_requires_grad, &t_grad_fn, &t_grad, &t_name,
                                    &t_id, &t_counter, &t_announced, &t_hooks};
    Py_ssize_t *function_offsets[] = {&f_parents, &f_xp, &f_id, &f_shape, &f_dtype, &f_needs,
                                      &f_saved, &f_sources, &f_clock};
    for (int i = 0; i < 9; i++) {
        *tensor_offsets[i] = offsets[i];
        *function_offsets[i] = offsets[9 + i];
    }
    if (str_enabled == NULL) {
        PyObject **strings[] = {&str_enabled, &str_hooks, &str_inplace_clock, &str_timing_enabled,
                                &str_forward, &str_backward, &str_sets_dtype, &str_value,
                                &str_retained, &str_module, &str_dyngraph_prefix, &str_observe,
                                &str_grads, &str_fanned_in, &str_wanted, &str_retain_graph,
                                &str_create_graph, &str_freed, &str_array, &str_id_attr,
                                &str_scope, &str_epoch, &str_is_parameter, &str_target,
                                &str_name_attr, &str_nbytes, &str_xp, &str_asarray};
        const char *texts[] = {"enabled", "hooks", "inplace_clock", "timing_enabled", "forward",
                               "backward", "sets_dtype", "value", "retained", "__module__",
                               "dyngraph.", "observe", "grads", "fanned_in", "wanted",
                               "retain_graph", "create_graph", "freed", "array", "id",
                               "_scope", "epoch", "is_parameter", "target", "__name__",
                               "nbytes", "xp", "asarray"};
        for (int i = 0; i < 28; i++) {
            *strings[i] = PyUnicode_InternFromString(texts[i]);
            if (*strings[i] == NULL) {
                return NULL;
            }
        }
        empty_tuple = PyTuple_New(0);
        if (empty_tuple == NULL) {
            return NULL;
        }
    }
    PyObject *only = PyObject_CallFunction(values[23], "iOi", 0, values[12], 0); /* _OUTPUT */
    Py_XSETREF(output_only, only == NULL ? NULL : PyTuple_Pack(1, only));
    Py_XDECREF(only);
    if (output_only == NULL) {
        return NULL;
    }
    for (int i = 0; names[i] != NULL; i++) {
        Py_XSETREF(*targets[i], Py_NewRef(values[i]));
    }
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------------------------- set-up */

static PyObject *configure(PyObject *module, PyObject *args)
{
    PyObject *objects[10];
    if (!PyArg_ParseTuple(args, "OOOO!O!UOO!OO", &objects[0], &objects[1], &objects[2],
                          &PyDict_Type, &objects[3], &PyDict_Type, &objects[4], &objects[5],
                          &objects[6], &PyDict_Type, &objects[7], &objects[8], &objects[9])) {
        return NULL;
    }
    PyObject **slots[10] = {&py_preview, &py_preview_and_norm, &new_where, &is_internal_file,
                            &where_cache, &package_dir, &getframe, &hands_back_cache,
                            &hands_back, &unnamed};
    for (int i = 0; i < 10; i++) {
        Py_XSETREF(*slots[i], Py_NewRef(objects[i]));
    }
    Py_RETURN_NONE;
}

/* dyngraph.torch's, at the end of this file */
static PyObject *torch_announce_output(PyObject *module, PyObject *const *argv, Py_ssize_t nargs);
static PyObject *torch_grad_computed(PyObject *module, PyObject *const *argv, Py_ssize_t nargs);
static PyObject *torch_preview(PyObject *module, PyObject *tensor);
static PyObject *torch_preview_and_norm(PyObject *module, PyObject *tensor);
static PyObject *torch_saved_bytes(PyObject *module, PyObject *node);
static PyObject *configure_torch(PyObject *module, PyObject *parts);
static PyObject *torch_function(PyObject *module, PyObject *const *argv, Py_ssize_t nargs);

static PyMethodDef methods[] = {
    {"preview", preview, METH_O, "events.preview, in C."},
    {"preview_and_norm", preview_and_norm, METH_O, "events.preview_and_norm, in C."},
    {"where_from_stack", (PyCFunction)(void (*)(void))where_from_stack, METH_FASTCALL,
     "events.where_from_stack, in C."},
    {"emit", emit, METH_O, "events.emit, in C."},
    {"emit_edge_grad", (PyCFunction)(void (*)(void))emit_edge_grad, METH_FASTCALL,
     "events.emit_edge_grad, in C."},
    {"emit_grad_computed", (PyCFunction)(void (*)(void))emit_grad_computed, METH_FASTCALL,
     "events.emit_grad_computed, in C."},
    {"emit_op_created", (PyCFunction)(void (*)(void))emit_op_created, METH_FASTCALL,
     "events.emit_op_created, in C."},
    {"keep_rows", (PyCFunction)(void (*)(void))keep_rows, METH_FASTCALL,
     "dyngraph.jupyter.view.keep_rows, in C."},
    {"apply", (PyCFunction)(void (*)(void))engine_apply, METH_FASTCALL | METH_KEYWORDS,
     "Function.apply(cls, *args, **options): run forward on the inputs' arrays and wrap the "
     "result in a Tensor that remembers this node. This is the common case in C; the readable "
     "definition, which it follows and falls back to, is in dyngraph/function.py (NOTE "
     "[speedups] in dyngraph/_accelerated.py)."},
    {"propagate", engine_propagate, METH_O, "BackwardPass.propagate(self), in C."},
    {"replay_steps", (PyCFunction)(void (*)(void))replay_steps, METH_FASTCALL,
     "trace.replay_steps(plan, values, array_type), in C."},
    {"configure_engine", configure_engine, METH_O,
     "configure_engine(parts): the engine's classes, module dicts and the readable helpers the "
     "common path calls, by name (see dyngraph/_accelerated.py)."},
    {"configure_emit", configure_emit, METH_VARARGS,
     "configure_emit(events_globals, drop, EdgeGrad, GradComputed, NodeCreated): the spine's "
     "module dict, events._drop and the event classes the emit_* functions make."},
    {"configure", configure, METH_VARARGS,
     "configure(preview, preview_and_norm, new_where, is_internal_file, where_cache, "
     "package_dir, getframe, hands_back_cache, hands_back, unnamed): the Python definitions "
     "and caches (dyngraph/_accelerated.py calls it once)."},
    {"torch_announce_output", (PyCFunction)(void (*)(void))torch_announce_output, METH_FASTCALL,
     "dyngraph.torch._announce_output, in C."},
    {"torch_grad_computed", (PyCFunction)(void (*)(void))torch_grad_computed, METH_FASTCALL,
     "dyngraph.torch._grad_computed, in C."},
    {"torch_preview", torch_preview, METH_O, "dyngraph.torch._preview, in C."},
    {"torch_preview_and_norm", torch_preview_and_norm, METH_O,
     "dyngraph.torch._preview_and_norm, in C."},
    {"torch_saved_bytes", torch_saved_bytes, METH_O, "dyngraph.torch._saved_bytes, in C."},
    {"torch_function", (PyCFunction)(void (*)(void))torch_function, METH_FASTCALL,
     "dyngraph.torch._EventMode.__torch_function__(self, func, types, args, kwargs), in C."},
    {"configure_torch", configure_torch, METH_O,
     "configure_torch(parts): dyngraph.torch's module dict, classes and Python definitions, by "
     "name (dyngraph/_accelerated.py calls it when dyngraph.torch is imported)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef speedups_module = {
    PyModuleDef_HEAD_INIT, "dyngraph._speedups",
    "C beneath the readable modules (the definitions: function.py, autograd.py, events.py, "
    "jupyter/view.py; dyngraph/_accelerated.py installs them).", -1,
    methods,
};

PyMODINIT_FUNC PyInit__speedups(void)
{
    import_array();
    if (PyType_Ready(&CollectorType) < 0) {
        return NULL;
    }
    PyObject *module = PyModule_Create(&speedups_module);
    if (module == NULL) {
        return NULL;
    }
    if (PyModule_AddObjectRef(module, "Collector", (PyObject *)&CollectorType) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}

/* ------------------------------------------------------------------------------- dyngraph.torch */

/* dyngraph.torch's per-op and per-gradient functions (read the Python definitions there):
   _announce_output (the node behind an op's one output: its _Info made and hooked, then
   _announce_op's node_created) and _grad_computed (a node's prehook: its grad_computed). They
   read and set the same module state as the Python ones (the _Info objects, _module_path,
   _names, _pass, _saved_names, events.epoch) and hand every turn they do not take to the Python
   definitions, passed by configure_torch: a parent not told about yet, arguments in lists,
   data leaves, a node seen for the first time by another route, tensors whose numbers are not
   float32 or float64 in one block of CPU memory. The numbers of a tensor they take are read
   from its memory (``data_ptr()``), as numpy would read them, instead of through ``tolist()``. */

static PyObject *torch_globals = NULL;     /* dyngraph.torch's module dict */
static PyObject *torch_tensor_type = NULL; /* torch.Tensor */
static PyObject *torch_info_type = NULL;   /* dyngraph.torch._Info */
static PyObject *torch_float32 = NULL, *torch_float64 = NULL; /* torch.float32, torch.float64 */
static PyObject *torch_strided = NULL;     /* torch.strided */
static PyObject *torch_dir = NULL;         /* dyngraph.torch._TORCH_DIR */
static PyObject *torch_key = NULL;         /* dyngraph.torch._KEY */
static PyObject *torch_is_compiling = NULL; /* torch.compiler.is_compiling */
static PyObject *torch_is_tracing = NULL;   /* torch.jit.is_tracing */
static PyObject *torch_one = NULL;         /* 1 */
static PyObject *torch_zero = NULL, *torch_minus_one = NULL; /* 0 and -1 */
/* where each field of an _Info lies (its __slots__) */
static Py_ssize_t o_id, o_announced, o_consumers, o_saved_bytes, o_hooked, o_leaf;
#define N_TORCH_READABLE 15
static PyObject *torch_readable[N_TORCH_READABLE]; /* the Python definitions, by these names */
enum {
    PY_NODE_INFO, PY_ANNOUNCE_OP, PY_ANNOUNCE_WALKING, PY_DATA_LEAF, PY_SAVED_BYTES, PY_PREVIEW,
    PY_PREVIEW_AND_NORM, PY_DTYPE, PY_DEVICE, PY_TORCH_FUNCTION, PY_ANNOUNCE_OUTPUTS, PY_SHAPE,
    PY_GRAD_COMPUTED, PY_IS_INPLACE, PY_CALLED,
};
static const char *torch_readable_names[N_TORCH_READABLE] = {
    "_node_info", "_announce_op", "_announce_walking", "_data_leaf", "_saved_bytes", "_preview",
    "_preview_and_norm", "_dtype", "_device", "torch_function", "_announce_outputs", "_shape",
    "_grad_computed", "_is_inplace", "_called",
};
static PyObject *s_grad_fn, *s_metadata, *s_next_functions, *s_announced, *s_hooked, *s_id,
    *s_consumers, *s_saved_bytes, *s_leaf, *s_name, *s_register_prehook, *s_requires_grad,
    *s_is_cpu, *s_is_contiguous, *s_data_ptr, *s_nbytes, *s_layout, *s_grad, *s_dtype,
    *s_shape, *s_epoch, *s_scope, *s_items, *s_module_path, *s_names, *s_pass, *s_saved_names,
    *s_dtype_names, *s_active, *s_accumulate_grad, *s_cpu, *s_inplace, *s_colons, *s_is_neg,
    *s_backward;

static int torch_configured(void)
{
    if (torch_globals == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "dyngraph._speedups: call configure_torch() first "
                                            "(importing dyngraph.torch does)");
        return 0;
    }
    return 1;
}

static PyObject *torch_global(PyObject *name) /* borrowed, or NULL with an error */
{
    PyObject *value = PyDict_GetItemWithError(torch_globals, name);
    if (value == NULL && !PyErr_Occurred()) {
        PyErr_Format(PyExc_RuntimeError, "dyngraph.torch has no %R", name);
    }
    return value;
}

/* Untracks a tuple (or an event, a NamedTuple: no __dict__) from the cycle collector when none
   of its items is tracked: it can be in no cycle. Python's collector does this itself for plain
   tuples the first time it meets them, never for NamedTuples; an event kept by a recording
   would otherwise be traversed again at every collection of its generation. */
static void untrack_if_flat(PyObject *tuple)
{
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(tuple); i++) {
        PyObject *item = PyTuple_GET_ITEM(tuple, i);
        if (PyObject_IS_GC(item) && PyObject_GC_IsTracked(item)) {
            return;
        }
    }
    PyObject_GC_UnTrack(tuple);
}

/* The numbers of a CPU tensor of float32 or float64 in one row-major block: its memory (valid
   while the tensor lives) and how many; 1 if taken, 0 if not (no error), -1 on error. A tensor
   whose is_contiguous() or data_ptr() raises (one without storage, a wrapper) is not taken: the
   Python definition decides what it shows. */
static int not_taken_if_it_raised(void)
{
    if (PyErr_ExceptionMatches(PyExc_Exception)) {
        PyErr_Clear();
        return 0;
    }
    return -1;
}

static int tensor_numbers(PyObject *tensor, PyObject *shape, int is_cpu, Numbers *numbers)
{
    if (!is_cpu) {
        return 0;
    }
    PyObject *dtype = PyObject_GetAttr(tensor, s_dtype);
    if (dtype == NULL) {
        return -1;
    }
    Py_DECREF(dtype); /* torch's dtypes are kept alive by torch */
    if (dtype != torch_float32 && dtype != torch_float64) {
        return 0;
    }
    PyObject *layout = PyObject_GetAttr(tensor, s_layout);
    if (layout == NULL) {
        return -1;
    }
    Py_DECREF(layout);
    if (layout != torch_strided) {
        return 0;
    }
    PyObject *contiguous = PyObject_CallMethodNoArgs(tensor, s_is_contiguous);
    if (contiguous == NULL) {
        return not_taken_if_it_raised();
    }
    Py_DECREF(contiguous);
    if (contiguous != Py_True) {
        return 0;
    }
    Py_ssize_t n = 1;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(shape); i++) {
        Py_ssize_t size = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, i));
        if (size == -1 && PyErr_Occurred()) {
            return -1;
        }
        n *= size;
    }
    PyObject *address = PyObject_CallMethodNoArgs(tensor, s_data_ptr);
    if (address == NULL) {
        return not_taken_if_it_raised();
    }
    void *data = PyLong_AsVoidPtr(address);
    Py_DECREF(address);
    if (data == NULL && PyErr_Occurred()) {
        return -1;
    }
    if (data == NULL && n > 0) { /* no memory (forward AD's zero tensors): _shown decides */
        return 0;
    }
    if (n == 1) {
        /* PyTorch negates some views lazily (z.conj().imag): their memory holds the numbers
           before negation. Such a view skips every other number (its stride is 2), so the
           only contiguous ones hold a single number: those go to the readable preview. */
        PyObject *negative = PyObject_CallMethodNoArgs(tensor, s_is_neg);
        if (negative == NULL) {
            return not_taken_if_it_raised();
        }
        Py_DECREF(negative);
        if (negative != Py_False) {
            return 0;
        }
    }
    numbers->data = data;
    numbers->n = n;
    numbers->is_float32 = dtype == torch_float32;
    return 1;
}

static PyObject *tensor_preview(const Numbers *numbers) /* the first few, as floats */
{
    PyObject *preview = first_numbers(numbers);
    if (preview != NULL) {
        untrack_if_flat(preview);
    }
    return preview;
}

/* tuple(tensor.shape) where every size is an int; NULL with no error where one is not, or
   torch has none (a nested tensor: dyngraph.torch._shape and _preview decide); NULL with an
   error on error. */
static PyObject *plain_shape(PyObject *tensor)
{
    PyObject *size = PyObject_GetAttr(tensor, s_shape);
    if (size == NULL) {
        if (PyErr_ExceptionMatches(PyExc_RuntimeError)) { /* a strided nested tensor's */
            PyErr_Clear();
        }
        return NULL;
    }
    PyObject *shape = PySequence_Tuple(size);
    Py_DECREF(size);
    if (shape == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(shape); i++) {
        if (!PyLong_CheckExact(PyTuple_GET_ITEM(shape, i))) { /* a jagged one's symbolic size */
            Py_DECREF(shape);
            return NULL;
        }
    }
    return shape;
}

/* dyngraph.torch._preview(tensor), with the tensor's shape (a tuple of ints) and is_cpu
   known. */
static PyObject *torch_preview_of(PyObject *tensor, PyObject *shape, int is_cpu)
{
    Numbers numbers;
    int taken = tensor_numbers(tensor, shape, is_cpu, &numbers);
    if (taken < 0) {
        return NULL;
    }
    if (taken) {
        return tensor_preview(&numbers);
    }
    return PyObject_CallOneArg(torch_readable[PY_PREVIEW], tensor);
}

/* dyngraph.torch._preview_and_norm(tensor): (preview, norm). */
static PyObject *torch_preview_and_norm(PyObject *module, PyObject *tensor)
{
    if (!torch_configured()) {
        return NULL;
    }
    PyObject *shape = plain_shape(tensor);
    if (shape == NULL) {
        return PyErr_Occurred() ? NULL :
               PyObject_CallOneArg(torch_readable[PY_PREVIEW_AND_NORM], tensor);
    }
    PyObject *is_cpu = PyObject_GetAttr(tensor, s_is_cpu);
    Numbers numbers;
    int taken = is_cpu == NULL ? -1 : tensor_numbers(tensor, shape, is_cpu == Py_True, &numbers);
    Py_XDECREF(is_cpu);
    Py_DECREF(shape);
    if (taken < 0) {
        return NULL;
    }
    if (!taken) {
        return PyObject_CallOneArg(torch_readable[PY_PREVIEW_AND_NORM], tensor);
    }
    PyObject *preview = tensor_preview(&numbers);
    if (preview == NULL) {
        return NULL;
    }
    return Py_BuildValue("(Nd)", preview, l2_norm(&numbers));
}

/* dyngraph.torch._saved_bytes(node): bytes of the tensors a node saved (each block once). */
static PyObject *torch_saved_bytes(PyObject *module, PyObject *node)
{
    if (!torch_configured()) {
        return NULL;
    }
    PyObject *table = torch_global(s_saved_names); /* borrowed */
    if (table == NULL) {
        return NULL;
    }
    PyObject *names = PyDict_GetItemWithError(table, (PyObject *)Py_TYPE(node));
    if (names == NULL || !PyTuple_Check(names)) { /* not learned yet: the Python learns it */
        return PyErr_Occurred() ? NULL : PyObject_CallOneArg(torch_readable[PY_SAVED_BYTES], node);
    }
    Py_ssize_t n_names = PyTuple_GET_SIZE(names);
    if (n_names == 0) {
        return PyLong_FromLong(0);
    }
    long long total = 0;
    void *seen[16]; /* the addresses counted; more saved tensors than this: the Python */
    int n_seen = 0;
    for (Py_ssize_t i = 0; i < n_names; i++) {
        PyObject *value = PyObject_GetAttr(node, PyTuple_GET_ITEM(names, i));
        if (value == NULL) {
            if (PyErr_ExceptionMatches(PyExc_RuntimeError)) { /* freed already */
                PyErr_Clear();
                return PyLong_FromLong(0);
            }
            return NULL;
        }
        PyObject *items = (PyTuple_CheckExact(value) || PyList_CheckExact(value)) ?
                          PySequence_Tuple(value) : PyTuple_Pack(1, value);
        Py_DECREF(value);
        if (items == NULL) {
            return NULL;
        }
        for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(items); j++) {
            PyObject *item = PyTuple_GET_ITEM(items, j);
            int is_tensor = PyObject_IsInstance(item, torch_tensor_type);
            if (is_tensor <= 0) {
                if (is_tensor < 0) {
                    Py_DECREF(items);
                    return NULL;
                }
                continue;
            }
            PyObject *layout = PyObject_GetAttr(item, s_layout);
            if (layout == NULL) {
                Py_DECREF(items);
                return NULL;
            }
            Py_DECREF(layout);
            if (layout != torch_strided) {
                continue;
            }
            PyObject *address = PyObject_CallMethodNoArgs(item, s_data_ptr);
            if (address == NULL && PyErr_ExceptionMatches(PyExc_RuntimeError)) {
                PyErr_Clear(); /* _address: no storage of its own (a functorch wrapper) */
                address = PyLong_FromVoidPtr(item);
            }
            void *pointer = address == NULL ? NULL : PyLong_AsVoidPtr(address);
            Py_XDECREF(address);
            if (PyErr_Occurred()) {
                Py_DECREF(items);
                return NULL;
            }
            int counted = 0;
            for (int k = 0; k < n_seen; k++) {
                counted = counted || seen[k] == pointer;
            }
            if (counted) {
                continue;
            }
            if (n_seen == 16) {
                Py_DECREF(items);
                return PyObject_CallOneArg(torch_readable[PY_SAVED_BYTES], node);
            }
            seen[n_seen++] = pointer;
            PyObject *nbytes = PyObject_GetAttr(item, s_nbytes);
            long long size = nbytes == NULL ? -1 : PyLong_AsLongLong(nbytes);
            Py_XDECREF(nbytes);
            if (size == -1 && PyErr_Occurred()) {
                Py_DECREF(items);
                return NULL;
            }
            total += size;
        }
        Py_DECREF(items);
    }
    return PyLong_FromLongLong(total);
}

/* dyngraph.torch._where(): the learner's line, torch's own files passed over (and added to the
   spine's table of internal files the first time one is met). */
static PyObject *torch_where(PyObject *module)
{
    for (int i = 0; i < 65; i++) {
        PyObject *where = where_from_stack(module, NULL, 0); /* the frames above the caller's */
        if (where == NULL || where == Py_None) {
            return where;
        }
        PyObject *file = PyTuple_GET_ITEM(where, 0);
        int in_torch = PyUnicode_Tailmatch(file, torch_dir, 0, PY_SSIZE_T_MAX, -1);
        if (in_torch <= 0) {
            if (in_torch < 0) {
                Py_DECREF(where);
                return NULL;
            }
            return where;
        }
        if (i == 64 || PyDict_SetItem(is_internal_file, file, Py_True) < 0) {
            Py_DECREF(where);
            if (PyErr_Occurred()) {
                return NULL;
            }
            Py_RETURN_NONE;
        }
        Py_DECREF(where);
    }
    Py_RETURN_NONE;
}

static int same_epoch(PyObject *info, PyObject *epoch) /* info.announced == epoch: 1, 0, -1 */
{
    PyObject *announced = SLOT(info, o_announced);
    if (announced == epoch) {
        return 1;
    }
    return announced == NULL ? 0 : PyObject_RichCompareBool(announced, epoch, Py_EQ);
}

/* The _Info in a node's metadata whose prehook it is, or NULL (no error: not there, or not
   hooked); 1 in *failed on an error. Borrowed from the metadata dict. */
static PyObject *hooked_info(PyObject *node, int *failed)
{
    PyObject *metadata = PyObject_GetAttr(node, s_metadata);
    if (metadata == NULL) {
        *failed = 1;
        return NULL;
    }
    PyObject *info = PyDict_Check(metadata) ? PyDict_GetItemWithError(metadata, torch_key) :
                                              NULL;
    Py_DECREF(metadata); /* the node keeps its metadata dict */
    if (info == NULL) {
        *failed = PyErr_Occurred() != NULL;
        return NULL;
    }
    if (Py_TYPE(info) != (PyTypeObject *)torch_info_type) {
        return NULL;
    }
    return SLOT(info, o_hooked) == Py_True ? info : NULL;
}

/* _announce_op(args, node, info, output): node_created for the node an op made. */
static PyObject *torch_announce_op(PyObject *module, PyObject *args, PyObject *node,
                                   PyObject *info, PyObject *output)
{
    PyObject *epoch = PyDict_GetItemWithError(events_globals, s_epoch); /* borrowed */
    if (epoch == NULL) {
        return PyErr_Occurred() ? NULL : PyErr_Format(PyExc_RuntimeError, "no events.epoch");
    }
    Py_ssize_t n_args = PyTuple_GET_SIZE(args);
    for (Py_ssize_t i = 0; i < n_args; i++) { /* tensors in lists: the Python */
        PyObject *arg = PyTuple_GET_ITEM(args, i);
        if (PyTuple_Check(arg) || PyList_Check(arg)) {
            return PyObject_CallFunctionObjArgs(torch_readable[PY_ANNOUNCE_OP], args, node, info,
                                                output, NULL);
        }
    }
    PyObject *next = PyObject_GetAttr(node, s_next_functions);
    if (next == NULL) {
        return NULL;
    }
    if (!PyTuple_Check(next)) {
        Py_DECREF(next);
        return PyErr_Format(PyExc_TypeError, "next_functions is not a tuple");
    }
    Py_ssize_t n_next = PyTuple_GET_SIZE(next);
    PyObject *inputs = PyList_New(0);
    PyObject *parents = PyList_New(0);
    PyObject *result = NULL, *where = NULL, *fields[15] = {NULL};
    if (inputs == NULL || parents == NULL) {
        goto done;
    }
    Py_ssize_t n_empty = 0; /* slots (parents) with None: arguments needing no gradient */
    for (Py_ssize_t i = 0; i < n_next; i++) {
        PyObject *pair = PyTuple_GET_ITEM(next, i);
        PyObject *parent = PyTuple_Check(pair) && PyTuple_GET_SIZE(pair) == 2 ?
                           PyTuple_GET_ITEM(pair, 0) : NULL;
        if (parent == Py_None) {
            n_empty++;
            if (PyList_Append(parents, Py_None) < 0) {
                goto done;
            }
            continue;
        }
        int failed = 0, same = 0;
        PyObject *parent_info = parent == NULL ? NULL : hooked_info(parent, &failed);
        if (failed) {
            goto done;
        }
        if (parent_info != NULL) {
            same = same_epoch(parent_info, epoch);
            if (same < 0) {
                goto done;
            }
        }
        if (!same) { /* a parent not told about yet: the walk back */
            result = PyObject_CallFunctionObjArgs(torch_readable[PY_ANNOUNCE_WALKING], args,
                                                  node, info, output, NULL);
            goto done;
        }
        if (PyList_Append(parents, parent_info) < 0) {
            goto done;
        }
    }
    set_slot(info, o_announced, epoch);
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(parents); i++) {
        PyObject *parent_info = PyList_GET_ITEM(parents, i);
        if (parent_info == Py_None) {
            continue;
        }
        PyObject *consumers = SLOT(parent_info, o_consumers);
        PyObject *more = consumers == NULL ? NULL : PyNumber_Add(consumers, torch_one);
        if (more == NULL) {
            goto done;
        }
        set_slot(parent_info, o_consumers, more);
        Py_DECREF(more);
    }
    where = torch_where(module);
    if (where == NULL) {
        goto done;
    }
    Py_ssize_t n_tensors = 0;
    for (Py_ssize_t i = 0; i < n_args; i++) { /* data (needing no gradient): inputs too */
        PyObject *arg = PyTuple_GET_ITEM(args, i);
        int is_tensor = PyObject_IsInstance(arg, torch_tensor_type);
        if (is_tensor < 0) {
            goto done;
        }
        if (!is_tensor) {
            continue;
        }
        n_tensors++;
        PyObject *requires_grad = PyObject_GetAttr(arg, s_requires_grad);
        if (requires_grad == NULL) {
            goto done;
        }
        Py_DECREF(requires_grad);
        if (requires_grad == Py_True) {
            continue;
        }
        PyObject *id = PyObject_CallFunctionObjArgs(torch_readable[PY_DATA_LEAF], arg, where,
                                                    NULL);
        if (id == NULL || PyList_Append(inputs, id) < 0) { /* the data's ids, for now */
            Py_XDECREF(id);
            goto done;
        }
        Py_DECREF(id);
    }
    /* _in_order: each data tensor in its empty slot where the arguments line up with the
       slots; otherwise the data after the inputs that need a gradient */
    Py_ssize_t n_data = PyList_GET_SIZE(inputs), next_data = 0;
    int in_slots = n_next == n_tensors && n_empty == n_data;
    PyObject *data = inputs;
    inputs = PyList_New(0);
    if (inputs == NULL) {
        inputs = data; /* (freed at done) */
        goto done;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(parents); i++) {
        PyObject *parent_info = PyList_GET_ITEM(parents, i);
        PyObject *id = parent_info != Py_None ? SLOT(parent_info, o_id) :
                       in_slots ? PyList_GET_ITEM(data, next_data++) : Py_None;
        if (id == NULL || (id != Py_None && PyList_Append(inputs, id) < 0)) {
            Py_DECREF(data);
            goto done;
        }
    }
    for (Py_ssize_t i = in_slots ? n_data : 0; i < n_data; i++) {
        if (PyList_Append(inputs, PyList_GET_ITEM(data, i)) < 0) {
            Py_DECREF(data);
            goto done;
        }
    }
    Py_DECREF(data);
    PyObject *saved = Py_XNewRef(SLOT(info, o_saved_bytes));
    if (saved == Py_None) {
        Py_DECREF(saved);
        saved = torch_saved_bytes(module, node);
        if (saved == NULL) {
            goto done;
        }
        set_slot(info, o_saved_bytes, saved);
    }
    if (saved == NULL) {
        PyErr_SetString(PyExc_AttributeError, "an _Info without its saved_bytes");
        goto done;
    }
    fields[12] = saved;
    PyObject *id = Py_XNewRef(SLOT(info, o_id));
    int numbered = id == NULL ? -1 : PyObject_IsTrue(id);
    if (numbered <= 0) {
        Py_XDECREF(id);
        id = numbered < 0 ? NULL : PyObject_CallNoArgs(new_node_id);
        if (id == NULL) {
            goto done;
        }
        set_slot(info, o_id, id);
    }
    fields[0] = id;
    fields[1] = PyObject_CallMethodNoArgs(node, s_name);
    Py_ssize_t colons = fields[1] == NULL || !PyUnicode_Check(fields[1]) ? -1 :
                        PyUnicode_Find(fields[1], s_colons, 0, PY_SSIZE_T_MAX, -1);
    if (colons >= 0) { /* _op_name: CopySlices, not torch::autograd::CopySlices */
        Py_SETREF(fields[1], PyUnicode_Substring(fields[1], colons + 2, PY_SSIZE_T_MAX));
    }
    else if (colons == -2) {
        goto done;
    }
    fields[2] = PyList_AsTuple(inputs);
    fields[3] = plain_shape(output);
    int plain = fields[3] != NULL; /* not a nested tensor: its preview can be read here */
    if (!plain && !PyErr_Occurred()) {
        fields[3] = PyObject_CallOneArg(torch_readable[PY_SHAPE], output);
    }
    if (fields[1] == NULL || fields[2] == NULL || fields[3] == NULL) {
        goto done;
    }
    untrack_if_flat(fields[2]);
    untrack_if_flat(fields[3]);
    PyObject *dtype = PyObject_GetAttr(output, s_dtype);
    PyObject *dtype_names = torch_global(s_dtype_names);
    PyObject *dtype_name = dtype == NULL || dtype_names == NULL ? NULL :
                           PyDict_GetItemWithError(dtype_names, dtype);
    Py_XDECREF(dtype);
    if (PyErr_Occurred()) {
        goto done;
    }
    fields[4] = dtype_name != NULL ? Py_NewRef(dtype_name) :
                PyObject_CallOneArg(torch_readable[PY_DTYPE], output);
    PyObject *is_cpu = PyObject_GetAttr(output, s_is_cpu);
    if (fields[4] == NULL || is_cpu == NULL) {
        Py_XDECREF(is_cpu);
        goto done;
    }
    Py_DECREF(is_cpu);
    fields[5] = is_cpu == Py_True ? Py_NewRef(s_cpu) :
                PyObject_CallOneArg(torch_readable[PY_DEVICE], output);
    if (fields[5] == NULL) {
        goto done;
    }
    fields[6] = Py_NewRef(Py_True);  /* requires_grad */
    fields[7] = Py_NewRef(Py_False); /* is_leaf */
    /* _names.get(output, (None,))[0]: its _items, id() -> (weakref, (name, scope)) */
    PyObject *names = torch_global(s_names);
    PyObject *items = names == NULL ? NULL : PyObject_GetAttr(names, s_items);
    PyObject *key = items == NULL ? NULL : PyLong_FromVoidPtr(output);
    PyObject *item = key == NULL ? NULL : PyDict_GetItemWithError(items, key);
    Py_XDECREF(key);
    Py_XDECREF(items);
    if (PyErr_Occurred()) {
        goto done;
    }
    fields[8] = Py_NewRef(Py_None);
    if (item != NULL && PyTuple_Check(item) && PyTuple_GET_SIZE(item) == 2 &&
        PyWeakref_Check(PyTuple_GET_ITEM(item, 0)) &&
        PyWeakref_GetObject(PyTuple_GET_ITEM(item, 0)) == output) {
        PyObject *label = PySequence_GetItem(PyTuple_GET_ITEM(item, 1), 0);
        if (label == NULL) {
            goto done;
        }
        Py_SETREF(fields[8], label);
    }
    /* the scope: events._scope + tuple(_module_path) if _module_path else events._scope */
    PyObject *scope = PyDict_GetItemWithError(events_globals, s_scope);
    PyObject *path = scope == NULL ? NULL : torch_global(s_module_path);
    if (path == NULL) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_RuntimeError, "no events._scope");
        }
        goto done;
    }
    if (PyList_Check(path) && PyList_GET_SIZE(path) > 0) {
        PyObject *inner = PyList_AsTuple(path);
        fields[9] = inner == NULL ? NULL : PySequence_Concat(scope, inner);
        Py_XDECREF(inner);
        if (fields[9] == NULL) {
            goto done;
        }
        if (PyTuple_CheckExact(fields[9])) {
            untrack_if_flat(fields[9]);
        }
    }
    else {
        fields[9] = Py_NewRef(scope);
    }
    fields[10] = Py_NewRef(where);
    if (PyTuple_Check(where)) { /* a SourceLine: its file, line, function, cell and target */
        untrack_if_flat(where);
    }
    fields[11] = plain ? torch_preview_of(output, fields[3], is_cpu == Py_True) :
                         PyObject_CallOneArg(torch_readable[PY_PREVIEW], output);
    if (fields[11] == NULL) {
        goto done;
    }
    fields[13] = Py_NewRef(Py_False); /* recomputing */
    fields[14] = Py_NewRef(Py_None);  /* elapsed */
    PyTypeObject *type = (PyTypeObject *)node_created_type;
    PyObject *event = type->tp_alloc(type, 15);
    if (event == NULL) {
        goto done;
    }
    for (int i = 0; i < 15; i++) {
        PyTuple_SET_ITEM(event, i, fields[i]); /* steals each reference */
        fields[i] = NULL;
    }
    untrack_if_flat(event);
    result = emit(module, event);
    Py_DECREF(event);
done:
    for (int i = 0; i < 15; i++) {
        Py_XDECREF(fields[i]);
    }
    Py_XDECREF(where);
    Py_XDECREF(inputs);
    Py_XDECREF(parents);
    Py_DECREF(next);
    return result;
}

static PyObject *grad_computed_of(PyObject *info, PyObject *grad_outputs);

/* A node's prehook, made here for the nodes whose _Info is made here: grad_computed_of(info,
   grad_outputs), with the _Info as the function's self (a Python _Info is its own prehook,
   through its __call__; this one calls the same without a Python frame). */
static PyObject *grad_hook(PyObject *info, PyObject *grad_outputs)
{
    return grad_computed_of(info, grad_outputs);
}

static PyMethodDef grad_hook_def = {"_grad_computed", grad_hook, METH_O,
                                    "dyngraph.torch._grad_computed(info, grad_outputs), for one "
                                    "node: its prehook."};

/* A new _Info, as _Info() makes it (its fields set here, without running __init__), that is
   the prehook of ``node``: hooked. Neither it nor its hook is tracked by the cycle collector:
   they hold numbers, None and each other one way (the hook holds the _Info), so they can be in
   no cycle; the collector would otherwise traverse both, for every node, while the graph
   lives (an op's node is never a leaf's, the one kind whose _Info holds a weak reference). */
static PyObject *new_hooked_info(PyObject *node)
{
    PyTypeObject *type = (PyTypeObject *)torch_info_type;
    PyObject *info = type->tp_alloc(type, 0);
    if (info == NULL) {
        return NULL;
    }
    set_slot(info, o_id, torch_zero);
    set_slot(info, o_announced, torch_minus_one);
    set_slot(info, o_consumers, torch_zero);
    set_slot(info, o_saved_bytes, Py_None);
    set_slot(info, o_hooked, Py_True);
    set_slot(info, o_leaf, Py_None);
    PyObject_GC_UnTrack(info);
    PyObject *hook = PyCFunction_New(&grad_hook_def, info);
    if (hook != NULL) {
        PyObject_GC_UnTrack(hook);
    }
    PyObject *handle = hook == NULL ? NULL :
                       PyObject_CallMethodOneArg(node, s_register_prehook, hook);
    Py_XDECREF(hook);
    if (handle == NULL) {
        Py_DECREF(info);
        return NULL;
    }
    Py_DECREF(handle);
    return info;
}

/* dyngraph.torch._announce_output(args, output). */
static PyObject *torch_announce_output(PyObject *module, PyObject *const *argv,
                                       Py_ssize_t nargs)
{
    if (nargs != 2 || !PyTuple_Check(argv[0])) {
        PyErr_SetString(PyExc_TypeError, "_announce_output(args: tuple, output)");
        return NULL;
    }
    if (!torch_configured()) {
        return NULL;
    }
    PyObject *args = argv[0], *output = argv[1];
    PyObject *node = PyObject_GetAttr(output, s_grad_fn);
    if (node == NULL && PyErr_ExceptionMatches(PyExc_RuntimeError)) {
        /* _grad_fn: a view changed in place under no_grad has none to tell (NOTE [views
           changed under no_grad]) */
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    if (node == NULL || node == Py_None) {
        return node;
    }
    PyObject *result = NULL, *info = NULL;
    PyObject *metadata = PyObject_GetAttr(node, s_metadata);
    if (metadata == NULL) {
        goto done;
    }
    info = PyDict_Check(metadata) ? Py_XNewRef(PyDict_GetItemWithError(metadata, torch_key)) :
                                    NULL;
    if (info == NULL && !PyErr_Occurred() && PyDict_Check(metadata)) {
        /* a node seen for the first time, made by an op (never AccumulateGrad, a leaf's):
           _node_info's common case */
        info = new_hooked_info(node);
        if (info != NULL && PyDict_SetItem(metadata, torch_key, info) < 0) {
            Py_CLEAR(info);
        }
    }
    else if (info != NULL && (Py_TYPE(info) != (PyTypeObject *)torch_info_type ||
                              SLOT(info, o_hooked) != Py_True)) {
        Py_SETREF(info, PyObject_CallOneArg(torch_readable[PY_NODE_INFO], node));
    }
    else if (info == NULL && !PyErr_Occurred()) {
        info = PyObject_CallOneArg(torch_readable[PY_NODE_INFO], node);
    }
    Py_DECREF(metadata);
    if (info == NULL) {
        goto done;
    }
    if (Py_TYPE(info) != (PyTypeObject *)torch_info_type) {
        PyErr_SetString(PyExc_TypeError, "_node_info must return an _Info");
        goto done;
    }
    PyObject *epoch = PyDict_GetItemWithError(events_globals, s_epoch);
    int same = epoch == NULL ? -1 : same_epoch(info, epoch);
    if (same < 0) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_RuntimeError, "no events.epoch");
        }
        goto done;
    }
    result = same ? Py_NewRef(Py_None) : torch_announce_op(module, args, node, info, output);
done:
    Py_XDECREF(info);
    Py_DECREF(node);
    return result;
}

/* dyngraph.torch._grad_computed(info, grad_outputs): a node's prehook. */
static PyObject *torch_grad_computed(PyObject *module, PyObject *const *argv, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "_grad_computed(info, grad_outputs)");
        return NULL;
    }
    if (!torch_configured()) {
        return NULL;
    }
    if (Py_TYPE(argv[0]) != (PyTypeObject *)torch_info_type) {
        PyErr_SetString(PyExc_TypeError, "_grad_computed: info must be an _Info");
        return NULL;
    }
    return grad_computed_of(argv[0], argv[1]);
}

static PyObject *grad_computed_of(PyObject *info, PyObject *grad_outputs)
{
    PyObject *active = PyDict_GetItemWithError(events_globals, s_active);
    if (active != Py_True) {
        if (PyErr_Occurred()) {
            return NULL;
        }
        Py_RETURN_NONE;
    }
    if (!PyTuple_Check(grad_outputs) || PyTuple_GET_SIZE(grad_outputs) != 1) {
        /* a node of several outputs (or none): the readable definition joins their gradients */
        return PyObject_CallFunctionObjArgs(torch_readable[PY_GRAD_COMPUTED], info, grad_outputs,
                                            NULL);
    }
    PyObject *grad = PySequence_GetItem(grad_outputs, 0);
    if (grad == NULL || grad == Py_None) {
        return grad;
    }
    PyObject *result = NULL, *pair = NULL;
    PyObject *consumers = SLOT(info, o_consumers), *leaf = SLOT(info, o_leaf);
    PyObject *id = SLOT(info, o_id);
    if (consumers == NULL || leaf == NULL || id == NULL) {
        PyErr_SetString(PyExc_AttributeError, "an _Info without all its fields");
        goto done;
    }
    int accumulated = PyObject_RichCompareBool(consumers, torch_one, Py_GT);
    if (accumulated < 0) {
        goto done;
    }
    if (leaf != Py_None) {
        PyObject *tensor = PyObject_CallNoArgs(leaf);
        if (tensor == NULL) {
            goto done;
        }
        if (!accumulated && tensor != Py_None) {
            PyObject *tensor_grad = PyObject_GetAttr(tensor, s_grad);
            if (tensor_grad == NULL) {
                Py_DECREF(tensor);
                goto done;
            }
            accumulated = tensor_grad != Py_None;
            Py_DECREF(tensor_grad);
        }
        Py_DECREF(tensor);
        /* a leaf outlives its graph: the next graph that uses it counts its uses afresh */
        set_slot(info, o_consumers, torch_zero);
    }
    pair = torch_preview_and_norm(NULL, grad);
    if (pair == NULL) {
        goto done;
    }
    if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
        PyErr_SetString(PyExc_TypeError, "_preview_and_norm must return (preview, norm)");
        goto done;
    }
    PyTypeObject *type = (PyTypeObject *)grad_computed_type;
    PyObject *event = type->tp_alloc(type, 4);
    if (event == NULL) {
        goto done;
    }
    PyTuple_SET_ITEM(event, 0, Py_NewRef(id));
    PyTuple_SET_ITEM(event, 1, Py_NewRef(PyTuple_GET_ITEM(pair, 0)));
    PyTuple_SET_ITEM(event, 2, Py_NewRef(PyTuple_GET_ITEM(pair, 1)));
    PyTuple_SET_ITEM(event, 3, Py_NewRef(accumulated ? Py_True : Py_False));
    untrack_if_flat(event);
    PyObject *emitted = emit(NULL, event);
    Py_DECREF(event);
    if (emitted == NULL) {
        goto done;
    }
    Py_DECREF(emitted);
    /* if _pass and info.saved_bytes: _pass[-1].append(info.id) */
    PyObject *passes = torch_global(s_pass);
    if (passes == NULL) {
        goto done;
    }
    if (PyList_Check(passes) && PyList_GET_SIZE(passes) > 0) {
        PyObject *saved = SLOT(info, o_saved_bytes);
        int some = saved == NULL ? 0 : PyObject_IsTrue(saved);
        if (some < 0 || (some && PyList_Append(PyList_GET_ITEM(passes, PyList_GET_SIZE(passes) -
                                                                           1), id) < 0)) {
            goto done;
        }
    }
    result = Py_NewRef(Py_None);
done:
    Py_XDECREF(pair);
    Py_DECREF(grad);
    return result;
}

static PyObject *torch_preview(PyObject *module, PyObject *tensor)
{
    if (!torch_configured()) {
        return NULL;
    }
    PyObject *shape = plain_shape(tensor);
    if (shape == NULL) {
        return PyErr_Occurred() ? NULL : PyObject_CallOneArg(torch_readable[PY_PREVIEW], tensor);
    }
    PyObject *is_cpu = PyObject_GetAttr(tensor, s_is_cpu);
    PyObject *preview = is_cpu == NULL ? NULL :
                        torch_preview_of(tensor, shape, is_cpu == Py_True);
    Py_XDECREF(is_cpu);
    Py_XDECREF(shape);
    return preview;
}

/* _EventMode.__torch_function__(self, func, types, args, kwargs): the readable method's common
   case, a torch function known not to change its input in place (the rest goes to the readable
   method: backward, in-place ops, a function met for the first time). */
static PyObject *torch_function(PyObject *module, PyObject *const *argv, Py_ssize_t nargs)
{
    if (!torch_configured()) {
        return NULL;
    }
    PyObject *kwargs = nargs == 5 && argv[4] != Py_None ? argv[4] : NULL;
    if (nargs != 4 && nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "__torch_function__(self, func, types, args, kwargs)");
        return NULL;
    }
    if (!PyTuple_Check(argv[3]) || (kwargs != NULL && !PyDict_Check(kwargs))) {
        return PyObject_Vectorcall(torch_readable[PY_TORCH_FUNCTION], argv, nargs, NULL);
    }
    PyObject *func = argv[1], *args = argv[3];
    PyObject *active = PyDict_GetItemWithError(events_globals, s_active);
    if (active != Py_True) {
        return PyErr_Occurred() ? NULL : PyObject_Call(func, args, kwargs);
    }
    /* the readable _compiling(): torch.compile, torch.export or torch.jit.trace runs the code
       (NOTE [compiled code]) */
    PyObject *checks[2] = {torch_is_compiling, torch_is_tracing};
    for (int i = 0; i < 2; i++) {
        PyObject *compiling = PyObject_CallNoArgs(checks[i]);
        if (compiling == NULL) {
            return NULL;
        }
        Py_DECREF(compiling); /* True or False: kept alive by Python */
        if (compiling != Py_False) {
            return PyObject_Call(func, args, kwargs);
        }
    }
    PyObject *table = torch_global(s_inplace);
    PyObject *inplace = table == NULL || !PyDict_Check(table) ? NULL :
                        PyDict_GetItemWithError(table, func);
    if (inplace == NULL && table != NULL && PyDict_Check(table) && !PyErr_Occurred()) {
        /* met for the first time: learn whether it changes its input (the readable _is_inplace)
           and go on here, so that it too runs with no Python frame of dyngraph's around it
           (NOTE [the mode's entry]); backward is the readable method's */
        PyObject *backward = torch_global(s_backward);
        int is_backward = backward == NULL ? -1 : PySequence_Contains(backward, func);
        if (is_backward < 0) {
            return NULL;
        }
        if (!is_backward) {
            PyObject *learned = PyObject_CallOneArg(torch_readable[PY_IS_INPLACE], func);
            if (learned == NULL || PyDict_SetItem(table, func, learned) < 0) {
                Py_XDECREF(learned);
                return NULL;
            }
            Py_DECREF(learned);
            inplace = PyDict_GetItemWithError(table, func);
        }
    }
    if (inplace != Py_False) {
        return PyErr_Occurred() ? NULL :
               PyObject_Vectorcall(torch_readable[PY_TORCH_FUNCTION], argv, nargs, NULL);
    }
    PyObject *out;
    if (PyFunction_Check(func)) {
        /* a torch function written in Python (F.softmax) warns at its caller's line, here the
           dispatcher's: the readable _called places it at the learner's (NOTE [the mode's
           entry]); a function in C warns at the innermost Python frame, the learner's */
        PyObject *given = kwargs != NULL ? Py_NewRef(kwargs) : PyDict_New();
        out = given == NULL ? NULL : PyObject_CallFunctionObjArgs(torch_readable[PY_CALLED],
                                                                 func, args, given, NULL);
        Py_XDECREF(given);
    }
    else {
        out = PyObject_Call(func, args, kwargs);
    }
    if (out == NULL) {
        return NULL;
    }
    active = PyDict_GetItemWithError(events_globals, s_active);
    if (active != Py_True) {
        if (PyErr_Occurred()) {
            Py_DECREF(out);
            return NULL;
        }
        return out;
    }
    /* _with_keyword_tensors: the tensors passed by keyword are the op's arguments too */
    PyObject *arguments = Py_NewRef(args);
    Py_ssize_t position = 0;
    PyObject *key, *value;
    while (kwargs != NULL && PyDict_Next(kwargs, &position, &key, &value)) {
        int is_tensor = PyObject_IsInstance(value, torch_tensor_type);
        PyObject *one = is_tensor > 0 ? PyTuple_Pack(1, value) : NULL;
        if (is_tensor > 0) {
            Py_SETREF(arguments, one == NULL ? NULL : PySequence_Concat(arguments, one));
            Py_XDECREF(one);
        }
        if (is_tensor < 0 || arguments == NULL) {
            Py_XDECREF(arguments);
            Py_DECREF(out);
            return NULL;
        }
    }
    PyObject *told;
    if (Py_TYPE(out) == (PyTypeObject *)torch_tensor_type) {
        PyObject *pair[2] = {arguments, out};
        told = torch_announce_output(module, pair, 2);
    }
    else {
        told = PyObject_CallFunctionObjArgs(torch_readable[PY_ANNOUNCE_OUTPUTS], arguments, out,
                                           NULL);
    }
    Py_DECREF(arguments);
    if (told == NULL) {
        Py_DECREF(out);
        return NULL;
    }
    Py_DECREF(told);
    return out;
}

/* configure_torch(parts): dyngraph.torch's module dict, torch.Tensor and the dtypes and layout
   read here (dyngraph/_accelerated.py calls it when dyngraph.torch is imported). */
static PyObject *configure_torch(PyObject *module, PyObject *parts)
{
    if (!PyDict_Check(parts) || events_globals == NULL || node_created_type == NULL) {
        PyErr_SetString(PyExc_TypeError, "configure_torch(dict), after configure_emit()");
        return NULL;
    }
    struct { PyObject **name; const char *text; } names[] = {
        {&s_grad_fn, "grad_fn"}, {&s_metadata, "metadata"}, {&s_next_functions, "next_functions"},
        {&s_announced, "announced"}, {&s_hooked, "hooked"}, {&s_id, "id"},
        {&s_consumers, "consumers"}, {&s_saved_bytes, "saved_bytes"}, {&s_leaf, "leaf"},
        {&s_name, "name"}, {&s_register_prehook, "register_prehook"},
        {&s_requires_grad, "requires_grad"}, {&s_is_cpu, "is_cpu"},
        {&s_is_contiguous, "is_contiguous"}, {&s_data_ptr, "data_ptr"}, {&s_nbytes, "nbytes"},
        {&s_layout, "layout"}, {&s_grad, "grad"}, {&s_dtype, "dtype"}, {&s_shape, "shape"},
        {&s_epoch, "epoch"}, {&s_scope, "_scope"}, {&s_items, "_items"},
        {&s_module_path, "_module_path"}, {&s_names, "_names"}, {&s_pass, "_pass"},
        {&s_saved_names, "_saved_names"}, {&s_dtype_names, "_dtype_names"},
        {&s_active, "active"}, {&s_accumulate_grad, "AccumulateGrad"}, {&s_cpu, "cpu"},
        {&s_inplace, "_inplace"}, {&s_colons, "::"}, {&s_is_neg, "is_neg"},
        {&s_backward, "_BACKWARD"},
    };
    if ((torch_one == NULL && (torch_one = PyLong_FromLong(1)) == NULL) ||
        (torch_zero == NULL && (torch_zero = PyLong_FromLong(0)) == NULL) ||
        (torch_minus_one == NULL && (torch_minus_one = PyLong_FromLong(-1)) == NULL)) {
        return NULL;
    }
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (*names[i].name == NULL && (*names[i].name = PyUnicode_InternFromString(
                                           names[i].text)) == NULL) {
            return NULL;
        }
    }
    struct { PyObject **slot; const char *key; } objects[] = {
        {&torch_globals, "globals"}, {&torch_tensor_type, "Tensor"}, {&torch_info_type, "Info"},
        {&torch_float32, "float32"}, {&torch_float64, "float64"}, {&torch_strided, "strided"},
        {&torch_dir, "torch_dir"}, {&torch_key, "key"}, {&torch_is_compiling, "is_compiling"},
        {&torch_is_tracing, "is_tracing"},
    };
    PyObject *values[10 + N_TORCH_READABLE];
    size_t n_objects = sizeof(objects) / sizeof(objects[0]);
    for (size_t i = 0; i < n_objects + N_TORCH_READABLE; i++) {
        const char *key = i < n_objects ? objects[i].key : torch_readable_names[i - n_objects];
        values[i] = PyDict_GetItemString(parts, key);
        if (values[i] == NULL) {
            return PyErr_Format(PyExc_KeyError, "configure_torch: no %s", key);
        }
    }
    for (size_t i = 0; i < n_objects; i++) {
        Py_XSETREF(*objects[i].slot, Py_NewRef(values[i]));
    }
    for (size_t i = 0; i < N_TORCH_READABLE; i++) {
        Py_XSETREF(torch_readable[i], Py_NewRef(values[n_objects + i]));
    }
    if (!PyType_Check(torch_info_type)) {
        return PyErr_Format(PyExc_TypeError, "configure_torch: Info must be a class");
    }
    struct { Py_ssize_t *offset; const char *name; } fields[] = {
        {&o_id, "id"}, {&o_announced, "announced"}, {&o_consumers, "consumers"},
        {&o_saved_bytes, "saved_bytes"}, {&o_hooked, "hooked"}, {&o_leaf, "leaf"},
    };
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
        if ((*fields[i].offset = slot_offset((PyTypeObject *)torch_info_type,
                                             fields[i].name)) < 0) {
            return NULL;
        }
    }
    Py_RETURN_NONE;
}
