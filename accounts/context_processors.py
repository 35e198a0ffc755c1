def viewer(request):
    """`viewer` in every template: the signed-in User, or the anonymous one."""
    return {"viewer": getattr(request, "user", None)}
