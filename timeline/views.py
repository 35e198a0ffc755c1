from django.shortcuts import render


def home(request):
    if not request.user.is_authenticated:
        return render(request, "timeline/welcome.html")
    return render(request, "timeline/home.html")
